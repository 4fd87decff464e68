"""The end of a Slack answer in Block Kit: trust band, numbered sources with deep links, web link, 👍/👎."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backend.channels.chat.slack_mrkdwn import escape

FEEDBACK_ACTION = "openguru_feedback"
MAX_SOURCES = 8  # a Slack message stays readable; the web page lists every one
HIGH, MEDIUM = 0.75, 0.5  # the same bands as the guru page's trust meter


def trust_line(score: float | None) -> str:
    """The trust score with a colour band (Slack text has no colours, so a coloured circle carries it)."""
    if score is None:
        return ""
    band = "🟢" if score >= HIGH else "🟡" if score >= MEDIUM else "🔴"
    return f"{band} Trust {round(score * 100)}%"


def _link(url: str, text: str) -> str:
    safe = escape(text).replace("|", "¦")[:150] or url
    return f"<{url}|{safe}>" if url.startswith(("https://", "http://")) else safe


def source_lines(references: list[dict[str, Any]], absolute: Callable[[str], str]) -> list[str]:
    """`[n] title` lines, cited sources only when the answer cited any; private sources keep no link."""
    cited = [r for r in references if r.get("cited")]
    shown = (cited or references)[:MAX_SOURCES]
    return [f"[{r.get('n', i)}] " + _link(absolute(str(r.get("link") or "")), str(r.get("title") or "source"))
            for i, r in enumerate(shown, start=1)]


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
    web = _link(answer_url, "View this answer on the web")
    if refused:
        note = f"ℹ️ Not answered: {escape(guru_name)}'s sources do not cover this question. · {web}"
        return [{"type": "context", "elements": [{"type": "mrkdwn", "text": note}]}, feedback_block(question_id)]
    blocks: list[dict[str, Any]] = []
    lines = source_lines(references, absolute)
    if lines:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "*Sources*\n" + "\n".join(lines)}})
    meta = " · ".join(part for part in (trust_line(trust), web) if part)
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": meta}]})
    blocks.append(feedback_block(question_id))
    return blocks
