"""The end of a Slack answer in Block Kit: trust band, numbered sources with deep links, web link, 👍/👎."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backend.channels.chat.footer import (
    HIGH,
    MAX_SOURCES,
    MEDIUM,
    WEB_LINK_TEXT,
    is_web_link,
    refusal_sentence,
    shown_sources,
    trust_line,
)
from backend.channels.chat.slack_mrkdwn import escape

FEEDBACK_ACTION = "openguru_feedback"
# The trust band and the choice of sources are every chat's (chat.footer); they stay importable from here.
__all__ = ["FEEDBACK_ACTION", "HIGH", "MAX_SOURCES", "MEDIUM", "feedback_block", "footer_blocks",
           "parse_feedback_value", "source_lines", "trust_line"]


def _link(url: str, text: str) -> str:
    safe = escape(text).replace("|", "¦") or url
    return f"<{url}|{safe}>" if is_web_link(url) else safe


def source_lines(references: list[dict[str, Any]], absolute: Callable[[str], str]) -> list[str]:
    """`[n] title` lines, cited sources only when the answer cited any; private sources keep no link."""
    return [f"[{source.number}] " + _link(absolute(source.link), source.title) for source in shown_sources(references)]


def feedback_block(question_id: int) -> dict[str, Any]:
    """Slack's feedback buttons; the value names the question so the vote lands on it."""
    def button(label: str, value: int) -> dict[str, Any]:
        return {"text": {"type": "plain_text", "text": label}, "value": f"{value}:{question_id}",
                "accessibility_label": "Helpful" if value > 0 else "Not helpful"}
    return {"type": "context_actions", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": button("👍", 1), "negative_button": button("👎", -1)}]}


def parse_feedback_value(value: str) -> tuple[int, int] | None:
    """(vote, question id) from a feedback button's value, or None for anything we did not send."""
    vote, _, question = value.partition(":")
    if vote not in ("1", "-1") or not question.isdigit() or len(question) > 18:
        return None
    return int(vote), int(question)


def footer_blocks(*, question_id: int, trust: float | None, refused: bool, references: list[dict[str, Any]],
                  answer_url: str, guru_name: str, absolute: Callable[[str], str]) -> list[dict[str, Any]]:
    """The blocks under the answer text."""
    web = _link(answer_url, WEB_LINK_TEXT)
    if refused:
        note = f"ℹ️ {refusal_sentence(escape(guru_name))} · {web}"
        return [{"type": "context", "elements": [{"type": "mrkdwn", "text": note}]}, feedback_block(question_id)]
    blocks: list[dict[str, Any]] = []
    lines = source_lines(references, absolute)
    if lines:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "*Sources*\n" + "\n".join(lines)}})
    meta = " · ".join(part for part in (trust_line(trust), web) if part)
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": meta}]})
    blocks.append(feedback_block(question_id))
    return blocks
