"""What every chat bot says under an answer, whatever its markup: trust band, which sources, refusal, error."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_SOURCES = 8  # a chat message stays readable; the web page lists every one
HIGH, MEDIUM = 0.75, 0.5  # the same bands as the guru page's trust meter
TITLE_LIMIT = 150  # a source title longer than this is cut (page titles can be whole sentences)
WEB_LINK_TEXT = "View this answer on the web"
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Source:
    """A source as a footer lists it: its number in the answer, a one-line bounded title, its link as stored."""

    number: int
    title: str
    link: str


def trust_line(score: float | None) -> str:
    """The trust score with a colour band (chat text has no colours, so a coloured circle carries it)."""
    if score is None:
        return ""
    band = "🟢" if score >= HIGH else "🟡" if score >= MEDIUM else "🔴"
    return f"{band} Trust {round(score * 100)}%"


def bounded(text: str, limit: int = TITLE_LIMIT) -> str:
    """`text` on one line, whitespace collapsed, cut at a word boundary with "…" if longer than `limit`."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def shown_sources(references: list[dict[str, Any]]) -> list[Source]:
    """The sources to list: the cited ones when the answer cited any (else all), at most MAX_SOURCES.

    A private source has no link (an empty one): the footer shows its title without a link.
    """
    cited = [r for r in references if r.get("cited")]
    shown = (cited or references)[:MAX_SOURCES]
    return [Source(int(r.get("n", i)), bounded(str(r.get("title") or "")) or "source", str(r.get("link") or ""))
            for i, r in enumerate(shown, start=1)]


def is_web_link(url: str) -> bool:
    """Whether `url` may be made clickable: only http(s), never a relative, javascript: or empty one."""
    return url.startswith(("https://", "http://"))


def refusal_sentence(guru_name: str) -> str:
    """Why a question was not answered; `guru_name` comes already escaped for the chat's markup."""
    return f"Not answered: {guru_name}'s sources do not cover this question."


def error_text(msg: str, error_id: str | None) -> str:
    """The reply when answering failed: the error's message and, when there is one, the id to report."""
    text = f"Sorry, I could not answer this: {msg}"
    return f"{text} (error id {error_id})" if error_id else text


def thinking_line(data: dict[str, Any]) -> str | None:
    """The progress line a bot shows for a status event of the agentic path ("💭 Searching for “retries”…"),
    or None for the other stages (a bot says it is searching once)."""
    text = data.get("text")
    if data.get("stage") != "thinking" or not isinstance(text, str) or not text:
        return None
    return f"💭 {bounded(text, 200)}{'' if data.get('done') else '…'}"
