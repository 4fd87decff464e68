"""The one check every channel (guru page, widget, API) applies to a question before asking it."""

from __future__ import annotations

import re

from backend.core.errors import InvalidQuestion
from backend.pipeline.understanding import MAX_QUESTION_CHARS

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_question(value: object) -> str:
    """The question as sent, or InvalidQuestion (400) saying what is wrong with it."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidQuestion("Send a non-empty `question` string.")
    if len(value) > MAX_QUESTION_CHARS:
        raise InvalidQuestion(f"Questions are limited to {MAX_QUESTION_CHARS} characters.")
    if "\x00" in value:
        # PostgreSQL cannot store NUL in text, and nobody types one: refused, as the API's serializer does.
        raise InvalidQuestion("Questions cannot contain NUL characters.")
    if _SURROGATE.search(value):
        # A lone surrogate (JSON "\ud800") is not text: it cannot be encoded to UTF-8 for storage or the stream.
        raise InvalidQuestion("Questions must be valid Unicode text.")
    return value
