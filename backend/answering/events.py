"""Events of one answer, in the order the SSE stream sends them."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any


class EventKind(str, enum.Enum):
    QUESTION = "question"
    STATUS = "status"
    REFERENCES = "references"
    DELTA = "delta"
    DONE = "done"
    ERROR = "error"


@dataclass(frozen=True)
class AnswerEvent:
    kind: EventKind
    data: dict[str, Any]

    def sse(self) -> str:
        """The event in text/event-stream framing."""
        return f"event: {self.kind.value}\ndata: {json.dumps(self.data, separators=(',', ':'))}\n\n"


def status(stage: str) -> AnswerEvent:
    return AnswerEvent(EventKind.STATUS, {"stage": stage})


def thinking(text: str, *, tool: str, done: bool) -> AnswerEvent:
    """One step of the agentic path, as the asker sees it ("Searching for “retry limits”")."""
    return AnswerEvent(EventKind.STATUS, {"stage": "thinking", "text": text, "tool": tool, "done": done})


def delta(text: str) -> AnswerEvent:
    return AnswerEvent(EventKind.DELTA, {"text": text})


def error(code: str, msg: str, error_id: str = "") -> AnswerEvent:
    """A stable code, a sentence for people (`msg`, as in every error body), and the id the cause was logged under."""
    return AnswerEvent(EventKind.ERROR, {"code": code, "msg": msg, "error_id": error_id})


def error_marker(data: dict[str, Any]) -> str:
    """How a raw-markdown stream ends when the answer failed after its first byte: one delimited line."""
    error_id = f" (error id {data['error_id']})" if data.get("error_id") else ""
    return f"\n\n---\n[OpenGuru error: {data.get('code', 'error')}] {data.get('msg', '')}{error_id}\n"
