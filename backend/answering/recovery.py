"""Answers whose web process died mid-stream: marked FAILED so no row says "being answered" forever."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from backend.answering.models import AnswerState, Question

logger = logging.getLogger(__name__)

# Far longer than any answer takes (the LLM call itself times out well before), so a live one is never hit.
ABANDONED_AFTER = timedelta(minutes=15)
INTERRUPTED = ("The answer was interrupted: the web process stopped before it finished "
               "(a crash or a restart). Nothing of it was stored or will be reused.")


def questions_fail_abandoned(*, older_than: timedelta = ABANDONED_AFTER) -> int:
    """Mark PENDING questions older than `older_than` FAILED with the reason; how many there were."""
    now = timezone.now()
    failed = Question.objects.filter(state=AnswerState.PENDING, created_at__lt=now - older_than).update(
        state=AnswerState.FAILED, error_code="interrupted", error_detail=INTERRUPTED, updated_at=now)
    if failed:
        logger.warning("marked %d interrupted answer(s) as failed", failed)
    return failed
