"""Thumbs up/down on answers: which values count, which question a caller may rate, recording the vote."""

from __future__ import annotations

import uuid

from backend.answering.models import Question
from backend.core.errors import NotFound
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
