"""Celery entry points for answering: background work after an answer; thin wrappers over services."""

from __future__ import annotations

from typing import Any

from backend.core.tasks import openguru_task


@openguru_task("answering.embed_question")
def question_embed(self: Any, *, question_id: int) -> None:
    from backend.answering.vectors import questions_embed

    questions_embed(question_ids=[question_id])


@openguru_task("answering.embed_questions")
def questions_embed(self: Any, *, question_ids: list[int]) -> int:
    from backend.answering.vectors import questions_embed as embed

    return embed(question_ids=question_ids)


@openguru_task("answering.fail_abandoned")
def questions_fail_abandoned(self: Any) -> int:
    from backend.answering.recovery import questions_fail_abandoned as fail

    return fail()


@openguru_task("answering.memory_learn")
def memory_learn(self: Any, *, question_id: int) -> int:
    from backend.answering.memory_learning import memory_learn as learn

    return learn(question_id=question_id)
