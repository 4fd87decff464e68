"""Which Discord messages, reactions and buttons the bot acts on, as plain data in and a decision out (no SDK)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from backend.channels.chat.rules import EVERY_MESSAGE, Rules

MAX_QUESTION = 4000
UP_REACTIONS = frozenset({"👍", "👍🏻", "👍🏼", "👍🏽", "👍🏾", "👍🏿"})
DOWN_REACTIONS = frozenset({"👎", "👎🏻", "👎🏼", "👎🏽", "👎🏾", "👎🏿"})
FEEDBACK_PREFIX = "openguru:vote:"


class Place(StrEnum):
    CHANNEL = "channel"  # a text or announcement channel
    THREAD = "thread"  # a thread of a text channel, or a forum post
    DM = "dm"
    OTHER = "other"  # voice text chat, group DMs, stage…: never answered


@dataclass(frozen=True)
class Incoming:
    """One message as the listener read it from discord.py."""

    message_id: str
    channel_id: str
    author_id: str
    author_is_bot: bool
    content: str
    place: Place
    guild_id: str = ""
    mentions_bot: bool = False
    plain: bool = True  # a default message or a reply (not a join, a pin, a thread-created notice…)
    parent_id: str = ""  # a thread's channel (text or forum)
    thread_owner_id: str = ""
    names: dict[str, str] = field(default_factory=dict)  # mentioned user id -> display name


@dataclass(frozen=True)
class Ask:
    """Answer `question`: in the thread `thread_id`, or in a new thread opened on `message_id` when it is empty."""

    channel_id: str
    message_id: str
    author_id: str
    question: str
    thread_id: str
    guild_id: str
    dm: bool = False

    @property
    def opens_thread(self) -> bool:
        return not self.thread_id

    @property
    def conversation_key(self) -> str:
        """The thread (or DM channel) that is one conversation session."""
        return self.thread_id or self.channel_id


@dataclass(frozen=True)
class NotAllowed:
    """Someone asked the bot where it may not answer: tell them how a maintainer allows it."""

    channel_id: str
    message_id: str
    dm: bool


@dataclass(frozen=True)
class Ignore:
    reason: str


Decision = Ask | NotAllowed | Ignore
_MENTION = re.compile(r"<@!?(\d+)>")


def question_text(content: str, bot_user_id: str, names: dict[str, str]) -> str:
    """The message as a person reads it: the bot's mention dropped, other mentions shown as names."""
    def replace(match: re.Match[str]) -> str:
        user = match.group(1)
        return "" if user == bot_user_id else "@" + names.get(user, "someone")
    return re.sub(r"\s+", " ", _MENTION.sub(replace, content)).strip()[:MAX_QUESTION]


def _ask(message: Incoming, rules: Rules, *, thread_id: str, dm: bool = False) -> Decision:
    question = question_text(message.content, rules.bot_user_id, message.names)
    if not question:
        return Ignore("nothing asked")
    return Ask(message.channel_id, message.message_id, message.author_id, question, thread_id, message.guild_id, dm)


def _in_channel(message: Incoming, rules: Rules) -> Decision:
    mode = rules.channels.get(message.channel_id)
    if mode is None:
        return NotAllowed(message.channel_id, message.message_id, dm=False) if message.mentions_bot else Ignore(
            "not a channel the bot answers in")
    if mode == EVERY_MESSAGE or message.mentions_bot:
        return _ask(message, rules, thread_id="")
    return Ignore("not a mention in a channel answered on mention")


def _in_thread(message: Incoming, rules: Rules, known: bool) -> Decision:
    mode = rules.channels.get(message.parent_id)
    if mode is None:
        # A thread the bot opened stays its conversation even if its channel was taken off the allow-list.
        if not known:
            return NotAllowed(message.channel_id, message.message_id, dm=False) if message.mentions_bot else Ignore(
                "not in a channel the bot answers in")
        return _ask(message, rules, thread_id=message.channel_id) if message.mentions_bot else Ignore(
            "the thread's channel is no longer answered; only mentions are")
    bots_own = known and message.thread_owner_id == rules.bot_user_id
    forum_post = message.message_id == message.channel_id  # a forum post's first message has the thread's id
    if message.mentions_bot or bots_own or (mode == EVERY_MESSAGE and (known or forum_post)):
        return _ask(message, rules, thread_id=message.channel_id)
    return Ignore("a message in a thread that is not the bot's conversation")


def decide(message: Incoming, rules: Rules, *, known_thread: Callable[[str], bool]) -> Decision:
    """What to do with one message: answer it (and where), say it is not allowed here, or leave it."""
    if message.author_is_bot or message.author_id == rules.bot_user_id:
        return Ignore("written by a bot (or by this bot)")
    if not message.plain:
        return Ignore("a system message")
    if message.place is Place.DM:
        if not rules.allow_dm:
            return NotAllowed(message.channel_id, message.message_id, dm=True)
        return _ask(message, rules, thread_id=message.channel_id, dm=True)
    if message.place is Place.CHANNEL:
        return _in_channel(message, rules)
    if message.place is Place.THREAD:
        return _in_thread(message, rules, known_thread(message.channel_id))
    return Ignore("not a text channel, thread or DM")


def reaction_vote(emoji: str) -> int:
    """1 for 👍 (any skin tone), -1 for 👎, 0 for any other emoji."""
    return 1 if emoji in UP_REACTIONS else -1 if emoji in DOWN_REACTIONS else 0


def feedback_custom_id(question_id: int, value: int) -> str:
    return f"{FEEDBACK_PREFIX}{value}:{question_id}"


def pick(rules_by_integration: dict[int, Rules], message: Incoming) -> int | None:
    """Which of the gurus sharing one bot a message is for: the one that allows its channel (or DMs), else the first."""
    if not rules_by_integration:
        return None
    channel = message.parent_id if message.place is Place.THREAD else message.channel_id
    for pk, rules in sorted(rules_by_integration.items()):
        if (message.place is Place.DM and rules.allow_dm) or channel in rules.channels:
            return pk
    return min(rules_by_integration)
