"""Celery entry points for answering: background work after an answer; thin wrappers over services."""

from __future__ import annotations

from typing import Any

from backend.core.tasks import openguru_task


@openguru_task("answering.embed_question")
def question_embed(self: Any, *, question_id: int) -> None:
    from backend.answering.vectors import question_embed as embed

    embed(question_id=question_id)
