"""Where a chat bot may answer, as both bots read one integration's settings."""

from __future__ import annotations

from dataclasses import dataclass

MENTION, EVERY_MESSAGE = "mention", "auto"  # a channel's mode: answer when mentioned, or every message there


@dataclass(frozen=True)
class Rules:
    """One integration's settings: who the bot is, where it may answer and how."""

    bot_user_id: str
    channels: dict[str, str]  # channel id -> MENTION | EVERY_MESSAGE
    allow_dm: bool
