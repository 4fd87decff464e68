"""A question request as every channel takes it: read and bounded once, the same codes everywhere."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, QueryDict

from backend.answering.validation import clean_question
from backend.core.errors import InvalidQuestion, RequestError

MAX_BODY_BYTES = 16 * 1024
# A conversation id: a UUID in its usual spelling (dashes optional); empty means a new conversation.
SESSION_PATTERN = r"^([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12})?$"
MAX_SLUG_CHARS = 200
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "")


@dataclass(frozen=True)
class QuestionInput:
    """One question: its text, the conversation it continues and how the answer is wanted."""

    question: str
    session_id: str | None = None
    stream: bool = False
    fetch_existing: bool = False


def json_object(request: HttpRequest) -> dict[str, Any]:
    """The request's body as a JSON object, at most MAX_BODY_BYTES (413 / 400 otherwise)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_BODY_BYTES or len(request.body) > MAX_BODY_BYTES:
        raise RequestError(413, "too_large", f"The request body is limited to {MAX_BODY_BYTES} bytes.")
    try:
        data = json.loads(request.body or b"{}")
    except ValueError as exc:  # not JSON, or not UTF-8 text at all
        raise RequestError(400, "invalid_json", "The body must be a JSON object.") from exc
    if not isinstance(data, dict):
        raise RequestError(400, "invalid_json", "The body must be a JSON object.")
    return data


def flag(data: Mapping[str, Any], name: str) -> bool:
    """A boolean field: JSON true, false or null; in a form (only strings there), "true", "1", "on"…"""
    value = data.get(name)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(data, QueryDict) and isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise RequestError(400, f"invalid_{name}", f"`{name}` must be true or false.")


def session_id(data: Mapping[str, Any], *names: str) -> str | None:
    """The conversation id under the first of `names` that is set: a UUID string, or None for a new one.

    Whether it exists is the pipeline's to say (a 404 `not_found` before any byte is streamed)."""
    for name in names:
        value = data.get(name)
        if value in (None, ""):
            continue
        if isinstance(value, str) and re.fullmatch(SESSION_PATTERN, value):
            return str(uuid.UUID(value))
        return _bad_session(name)
    return None


def _bad_session(name: str) -> str:
    raise RequestError(400, "invalid_session", f"`{name}` must be a conversation id (a UUID string).")


def optional_text(data: Mapping[str, Any], name: str, limit: int = MAX_SLUG_CHARS) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > limit:
        raise RequestError(400, f"invalid_{name}", f"`{name}` must be a string of at most {limit} characters.")
    return value


def _single_valued(form: QueryDict, names: tuple[str, ...]) -> None:
    """A form field sent twice is ambiguous (which one counts?): refused rather than guessed."""
    for name in names:
        if len(form.getlist(name)) > 1:
            raise RequestError(400, f"invalid_{name}", f"`{name}` was sent more than once.")


def question_input(data: object, *, session: tuple[str, ...] = ("session_id",)) -> QuestionInput:
    """The question request in `data` (a JSON object or a form), or the RequestError that refuses it."""
    if not isinstance(data, Mapping):
        raise RequestError(400, "invalid_json", "The body must be a JSON object.")
    if isinstance(data, QueryDict):
        _single_valued(data, ("question", *session, "stream", "fetch_existing"))
    try:
        text = clean_question(data.get("question"))
    except InvalidQuestion as exc:
        raise RequestError(exc.status, exc.code, exc.detail) from exc
    return QuestionInput(question=text.strip(), session_id=session_id(data, *session),
                         stream=flag(data, "stream"), fetch_existing=flag(data, "fetch_existing"))
