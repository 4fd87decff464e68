"""Answers whose web process died mid-stream end FAILED ("interrupted") instead of "being answered" for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from backend.answering.models import AnswerState, Question
from backend.answering.recovery import ABANDONED_AFTER
from backend.answering.tasks import questions_fail_abandoned
from backend.gurus.models import Guru

pytestmark = pytest.mark.django_db


def _question(guru: Guru, slug: str, state: AnswerState, age: timedelta) -> Question:
    question = Question.objects.create(guru=guru, user_question=slug, question=slug, slug=slug, state=state)
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - age)
    return question


def test_only_answers_pending_far_longer_than_any_answer_takes_are_failed(indexed: Guru) -> None:
    old = _question(indexed, "old", AnswerState.PENDING, ABANDONED_AFTER + timedelta(minutes=1))
    live = _question(indexed, "live", AnswerState.PENDING, timedelta(seconds=30))
    done = _question(indexed, "done", AnswerState.COMPLETE, timedelta(days=1))

    assert questions_fail_abandoned.delay().get() == 1  # the beat task, run eagerly in tests

    old.refresh_from_db()
    assert (old.state, old.error_code) == (AnswerState.FAILED, "interrupted") and "interrupted" in old.error_detail
    assert Question.objects.get(pk=live.pk).state == AnswerState.PENDING
    assert Question.objects.get(pk=done.pk).state == AnswerState.COMPLETE
