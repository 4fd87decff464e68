"""Which Slack events the bot answers, as plain data in and a decision out (no Django, no SDK)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.channels.chat.rules import EVERY_MESSAGE, Rules

# Message subtypes that are still a person writing; every other subtype (edits, deletions, joins, bot
# messages, channel topic changes…) is not a question.
ANSWERED_SUBTYPES = frozenset({"", "file_share", "thread_broadcast"})
UP_REACTIONS = frozenset({"+1", "thumbsup"})
DOWN_REACTIONS = frozenset({"-1", "thumbsdown"})
MAX_QUESTION = 4000


@dataclass(frozen=True)
class Ask:
    """Answer `question` in the thread that starts at `thread_ts`."""

    channel: str
    user: str
    team: str
    question: str
    thread_ts: str
    dm: bool

    @property
    def thread_key(self) -> str:
        return f"{self.channel}:{self.thread_ts}"


@dataclass(frozen=True)
class NotAllowed:
    """Someone asked where the bot may not answer: tell them (only them), and where to set it up."""

    channel: str
    user: str
    thread_ts: str
    dm: bool


@dataclass(frozen=True)
class React:
    """A 👍/👎 added to (value) or removed from (None) a message."""

    channel: str
    message_ts: str
    value: int | None
    removed_value: int | None = None


@dataclass(frozen=True)
class Ignore:
    reason: str


Decision = Ask | NotAllowed | React | Ignore
_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")


def plain_text(text: str, bot_user_id: str) -> str:
    """Slack's message markup as a person reads it: the bot's mention dropped, links and names shown."""
    def replace(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        if target == f"@{bot_user_id}":
            return ""
        if target.startswith(("@", "#", "!")):
            return (("#" if target.startswith("#") else "@") + label) if label else target
        return f"{label} ({target})" if label and label != target else target
    return html.unescape(_LINK.sub(replace, text)).strip()[:MAX_QUESTION]


def _from_person(event: dict[str, Any], rules: Rules) -> bool:
    user = str(event.get("user") or "")
    return bool(user) and user != rules.bot_user_id and not event.get("bot_id") and not event.get("bot_profile")


def _thread_ts(event: dict[str, Any]) -> str:
    return str(event.get("thread_ts") or event.get("ts") or "")


def _ask(event: dict[str, Any], rules: Rules, *, team: str, dm: bool) -> Decision:
    question = plain_text(str(event.get("text") or ""), rules.bot_user_id)
    if not question:
        return Ignore("nothing asked")
    return Ask(str(event.get("channel", "")), str(event["user"]), str(event.get("team") or team), question,
               _thread_ts(event), dm)


def _mention(event: dict[str, Any], rules: Rules, team: str) -> Decision:
    channel = str(event.get("channel", ""))
    if channel not in rules.channels:
        return NotAllowed(channel, str(event["user"]), _thread_ts(event), dm=False)
    return _ask(event, rules, team=team, dm=False)


def _message(event: dict[str, Any], rules: Rules, team: str, known_thread: Callable[[str], bool]) -> Decision:
    channel = str(event.get("channel", ""))
    if event.get("channel_type") == "im":
        if not rules.allow_dm:
            return NotAllowed(channel, str(event["user"]), _thread_ts(event), dm=True)
        return _ask(event, rules, team=team, dm=True)
    if f"<@{rules.bot_user_id}>" in str(event.get("text") or ""):
        return Ignore("a mention: its app_mention event is answered")
    if rules.channels.get(channel) != EVERY_MESSAGE:
        return Ignore("not a channel answered without a mention")
    in_thread = event.get("thread_ts") and event.get("thread_ts") != event.get("ts")
    if in_thread and not known_thread(f"{channel}:{event['thread_ts']}"):
        return Ignore("a reply in a thread the bot is not part of")
    return _ask(event, rules, team=team, dm=False)


def _reaction(event: dict[str, Any], rules: Rules) -> Decision:
    item = event.get("item") or {}
    name = str(event.get("reaction", "")).split("::")[0]  # skin tones: "+1::skin-tone-2"
    value = 1 if name in UP_REACTIONS else -1 if name in DOWN_REACTIONS else 0
    if not value or item.get("type") != "message" or not _from_person(event, rules):
        return Ignore("not a 👍/👎 on a message")
    if event.get("type") == "reaction_removed":
        return React(str(item.get("channel", "")), str(item.get("ts", "")), None, removed_value=value)
    return React(str(item.get("channel", "")), str(item.get("ts", "")), value)


def decide(event: dict[str, Any], rules: Rules, *, team: str, known_thread: Callable[[str], bool]) -> Decision:
    """What to do with one event of an `event_callback` (`team` is the payload's team id)."""
    kind = event.get("type")
    if kind in ("reaction_added", "reaction_removed"):
        return _reaction(event, rules)
    if kind not in ("app_mention", "message"):
        return Ignore(f"event {kind!r} is not handled")
    if str(event.get("subtype") or "") not in ANSWERED_SUBTYPES or event.get("edited"):
        return Ignore("an edit, a bot message or another subtype")
    if not _from_person(event, rules):
        return Ignore("not written by a person (or written by this bot)")
    if kind == "app_mention":
        return _mention(event, rules, team)
    return _message(event, rules, team, known_thread)
