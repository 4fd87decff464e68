"""Thumbs up/down on answers: which values count, which question a caller may rate, recording the vote."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from backend.answering.models import Question
from backend.core.errors import NotFound, RequestError
from backend.core.ratelimit import hit
from backend.gurus.models import Guru

UP, DOWN = 1, -1
VALUES = (UP, DOWN)
MAX_ID = 2**63 - 1  # the largest primary key; larger numbers would overflow the database's integer


def parse_feedback(value: object) -> int | None:
    """1 (helpful), -1 (not helpful) or None (clear the vote); anything else is a ValueError."""
    # bool is an int subclass: `true` must not count as a thumbs up.
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value in VALUES):
        return value
    raise ValueError("`feedback` must be 1, -1 or null.")


def session_question(*, guru: Guru, question_id: int, session_id: str) -> Question:
    """A question of this guru asked in this conversation.

    The public page is anonymous: holding the conversation's (random) id is what lets a visitor rate
    its answers, so sequential question ids alone cannot be used to rate every answer of a guru.
    """
    try:
        binge_id = uuid.UUID(session_id)
    except ValueError as exc:
        raise NotFound("No such question in this conversation.") from exc
    found = Question.objects.filter(pk=question_id, guru=guru, binge_id=binge_id) if 0 < question_id <= MAX_ID else None
    question = found.only("pk", "feedback").first() if found is not None else None
    if question is None:
        raise NotFound("No such question in this conversation.")
    return question


def guru_question(*, guru: Guru, question_id: int) -> Question:
    """A question of this guru (for callers already allowed to see all of its questions)."""
    found = Question.objects.filter(pk=question_id, guru=guru) if 0 < question_id <= MAX_ID else None
    question = found.only("pk", "feedback").first() if found is not None else None
    if question is None:
        raise NotFound(f"No question {question_id} for this guru.")
    return question


def feedback_set(*, question: Question, value: int | None) -> Question:
    """Record, change or clear the vote on one answer."""
    # updated_at is left alone: it dates the answer (the API's date_updated), not the vote.
    Question.objects.filter(pk=question.pk).update(feedback=value)
    question.feedback = value
    return question


@dataclass(frozen=True)
class Vote:
    """A visitor's thumbs up (1), down (-1) or cleared vote (None) on one answer of a conversation."""

    question_id: int
    session_id: str
    value: int | None


def parse_vote(data: dict[str, Any]) -> Vote:
    """`{question_id, session_id, feedback}` as the guru page and the widget send it, or 400 naming the field."""
    question_id, session_id = data.get("question_id"), data.get("session_id")
    if not isinstance(question_id, int) or isinstance(question_id, bool) or question_id < 1:
        raise RequestError(400, "invalid_question", "Send the answer's `question_id`.")
    if not isinstance(session_id, str) or not session_id or len(session_id) > 64:
        raise RequestError(400, "invalid_session", "Send the conversation's `session_id`.")
    try:
        value = parse_feedback(data.get("feedback"))
    except ValueError as exc:
        raise RequestError(400, "invalid_feedback", str(exc)) from exc
    return Vote(question_id, session_id, value)


def vote_record(*, guru: Guru, vote: Vote, client: str) -> Question:
    """Record, change or clear a visitor's vote on an answer of their conversation.

    One budget per visitor (`client`, their address) for votes on every channel, checked before the lookup
    so the endpoint cannot be used to probe for question ids."""
    decision = hit(f"feedback:{client}", limit=settings.OPENGURU_FEEDBACK_RATE_LIMIT)
    if not decision.allowed:
        raise RequestError(429, "rate_limited", "Too many votes; please wait a moment.",
                           {"Retry-After": str(decision.retry_after)})
    question = session_question(guru=guru, question_id=vote.question_id, session_id=vote.session_id)
    return feedback_set(question=question, value=vote.value)
