"""Wire formats of an answer, each made from the typed events themselves (never by re-reading our bytes)."""

from __future__ import annotations

from collections.abc import Callable

from backend.answering.events import AnswerEvent, EventKind, error_marker

Encoder = Callable[[AnswerEvent], bytes]


def sse(event: AnswerEvent) -> bytes:
    """Our stream: every event in text/event-stream framing (question, status, references, delta, done, error)."""
    return event.sse().encode()


def markdown(event: AnswerEvent) -> bytes:
    """Gurubase's raw stream: only the answer's text (ids and references come from `fetch_existing`), and a
    delimited error line if the answer fails once streaming has begun (the status line is long gone)."""
    if event.kind is EventKind.DELTA:
        return str(event.data["text"]).encode()
    if event.kind is EventKind.ERROR:
        return error_marker(event.data).encode()
    return b""
