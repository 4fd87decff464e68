"""What the Discord REST adapter returns and raises, without discord.py: the dashboard imports these at start."""

from __future__ import annotations

from dataclasses import dataclass


class DiscordError(Exception):
    """A Discord call that failed: `code` is "invalid_token", "forbidden", "connection_failed" or "http_<status>"."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message or code


@dataclass(frozen=True)
class BotIdentity:
    user_id: str
    name: str
    application_id: str
    message_content: bool  # the privileged Message Content intent is turned on in the Developer Portal


@dataclass(frozen=True)
class Guild:
    id: str
    name: str


@dataclass(frozen=True)
class DiscordChannel:
    id: str
    name: str
    kind: str  # "text" (text and announcement channels) or "forum"
    category: str  # the name of the category it is under, "" for none
