"""What a conversation teaches the guru's memory, for gurus that opt in: after an answer, the worker asks the
guru's language model for structured updates to its notes and files them as proposals (answering.memory)."""

from __future__ import annotations

import logging

from django.db import transaction

from backend.adapters import registry
from backend.answering.memory import Update, memory_propose
from backend.answering.models import AnswerState, Channel, Memory, MemoryStatus, Question
from backend.answering.selectors import chat_model_for
from backend.core.tasks import enqueue_on_commit
from backend.pipeline.llm_types import Flow
from backend.pipeline.memory_prompts import MEMORY_MAX_TOKENS, MEMORY_SCHEMA, Turn, memory_messages, read_updates

logger = logging.getLogger(__name__)
TURNS = 4
"""The conversation's last turns the model reads (the answered question and the three before it)."""
NOTES_SHOWN = 50
"""The guru's notes shown to the model (the most recently changed), so it revises instead of repeating them."""


def memory_learn_queue(question: Question) -> None:
    """After commit, have the worker learn from this answer, when its guru opted in and has a language model.
    Evaluation runs and cached replays teach nothing."""
    guru = question.guru
    if guru.memory_from_conversations and question.channel != Channel.EVAL \
            and registry.chat_model(model=chat_model_for(guru)) is not None:
        enqueue_on_commit("answering.memory_learn", question_id=question.pk)


def _turns(question: Question) -> list[Turn]:
    earlier = Question.objects.filter(binge_id=question.binge_id, state=AnswerState.COMPLETE,
                                      created_at__lte=question.created_at).order_by("-created_at")[:TURNS] \
        if question.binge_id else [question]
    return [Turn(q.user_question, q.content) for q in reversed(list(earlier))]


def memory_learn(*, question_id: int) -> int:
    """Propose the updates the guru's model finds in the conversation ending with this question; how many notes
    were touched. A guru that opted out since, or lost its model, is left alone."""
    question = Question.objects.select_related("guru").filter(pk=question_id, state=AnswerState.COMPLETE).first()
    if question is None or not question.guru.memory_from_conversations:
        return 0
    guru = question.guru
    chat = registry.chat_model(model=chat_model_for(guru))
    if chat is None:
        return 0
    notes = list(Memory.objects.filter(guru=guru).exclude(status=MemoryStatus.REJECTED)
                 .order_by("-updated_at").values_list("pk", "text")[:NOTES_SHOWN])
    messages = memory_messages(guru.domain_knowledge or guru.name, _turns(question), notes)
    reply = chat.complete_json(messages, schema=MEMORY_SCHEMA, schema_name="memory_updates",
                               max_tokens=MEMORY_MAX_TOKENS, flow=Flow.MEMORY)
    updates = read_updates(reply.data, {pk for pk, _ in notes})
    if not updates:
        return 0
    with transaction.atomic():
        touched = memory_propose(guru=guru, updates=[Update(u.text, u.memory_id) for u in updates], question=question)
    logger.info("guru %s: %d memory proposal(s) from question %s", guru.pk, len(touched), question.pk)
    return len(touched)
