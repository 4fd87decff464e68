"""Gurubase's widget stream: raw markdown that opens with a line break, which its renderer waits for."""

from __future__ import annotations

from backend.answering.events import AnswerEvent, EventKind
from backend.channels import encoders
from backend.channels.encoders import Encoder


class _OpenedMarkdown:
    """encoders.markdown, but the first text starts with "\\n".

    Gurubase's widget shows nothing of a stream before its first line break (it expects a "# Title" line to
    strip), and never renders what it holds when the stream ends: a one-paragraph answer would stay blank.
    The break makes it render from the first token; `fetch_existing` keeps the stored text as it is.
    """

    def __init__(self) -> None:
        self._first: AnswerEvent | None = None

    def __call__(self, event: AnswerEvent) -> bytes:
        text = encoders.markdown(event)
        if event.kind is not EventKind.DELTA or not text:
            return text
        # The pump encodes the first event twice (to skip silent ones, then to send it): same object, same bytes.
        if self._first is None or self._first is event:
            self._first = event
            return b"\n" + text
        return text


def widget_markdown() -> Encoder:
    """A fresh encoder for one widget answer stream."""
    return _OpenedMarkdown()
