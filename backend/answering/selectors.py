"""Answering read paths: thresholds in force, conversation history, the sources' version, the cache."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from django.db.models import Count, Max, Q

from backend.adapters import registry
from backend.answering.models import AnswerState, Binge, Memory, MemoryStatus, Question
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.pipeline import answerer_llm, answerer_offline, breadth, contexts, prompts, sanitize
from backend.pipeline.answer_types import Turn
from backend.pipeline.understanding import normalise_question
from backend.sources.models import DataSource, SourceGraphState, Summarization


def thresholds_for(guru: Guru) -> tuple[float, float]:
    """(rerank_threshold, trust_score_threshold): the guru's overrides, else the global settings."""
    stored = settings_get()
    rerank = guru.rerank_threshold if guru.rerank_threshold is not None else stored.rerank_threshold
    trust = guru.trust_score_threshold if guru.trust_score_threshold is not None else stored.trust_score_threshold
    return rerank, trust


def chat_model_for(guru: Guru) -> str:
    """The guru's chat model, else the instance's default answer model; empty means OPENGURU_CHAT_MODEL."""
    return guru.chat_model or settings_get().answer_model


def history_for(binge: Binge, *, turns: int) -> tuple[Turn, ...]:
    """The last answered turns of a conversation, oldest first."""
    rows = list(binge.questions.exclude(content="").order_by("-created_at")[:turns])
    return tuple(Turn(question=q.question, answer=q.content) for q in reversed(rows))


def sources_version(guru: Guru) -> str:
    """Changes whenever a source of the guru is (re-)indexed or removed, or its summaries change (a broad
    question's answer rests on them), or its source graph is rebuilt, or an approved memory changes: cached
    answers expire with it."""
    rows = DataSource.objects.filter(guru=guru, indexed_generation__isnull=False).order_by("pk").values_list(
        "pk", "indexed_generation", "last_indexed_at"
    )
    # Changed nodes are new rows and stale ones are deleted, so the searchable ones' count and newest id move.
    summaries = Summarization.objects.filter(guru=guru, vector_written=True).aggregate(n=Count("pk"), last=Max("pk"))
    # The source graph is rebuilt just after an index run: an answer cached in between used the old one.
    graph = SourceGraphState.objects.filter(guru=guru).values_list("updated_at", flat=True).first()
    notes = Memory.objects.filter(guru=guru, status=MemoryStatus.APPROVED).aggregate(
        n=Count("pk"), last=Max("updated_at"))
    return hashlib.sha256(repr((list(rows), summaries["n"], summaries["last"], graph, notes["n"], notes["last"]))
                          .encode()).hexdigest()[:32]


@cache
def prompt_version() -> str:
    """A digest of the code that turns contexts into an answer: editing a prompt or a rule expires the cache."""
    digest = hashlib.sha256()
    for module in (prompts, answerer_llm, answerer_offline, contexts, sanitize, breadth):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()[:16]


def answer_fingerprint(guru: Guru) -> str:
    """What an answer depends on besides the question and the sources: thresholds, model, embedder, prompts."""
    rerank, trust = thresholds_for(guru)
    chat = registry.chat_model(model=chat_model_for(guru))
    parts = {"rerank": rerank, "trust": trust, "model": "offline" if chat is None else f"{type(chat).__name__}:"
             f"{chat.model}", "embedder": registry.embedder_id(), "prompts": prompt_version(),
             "guru": [guru.name, guru.domain_knowledge, guru.language], "source_graph": guru.source_graph,
             "memory": guru.memory, "agentic": guru.agentic}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def cached_answer(guru: Guru, *, normalized_question: str, version: str, fingerprint: str) -> Question | None:
    """A complete first-turn answer to the same question, from the same sources, under the same settings."""
    return (
        Question.objects.filter(guru=guru, parent__isnull=True, user_question__iexact=normalized_question,
                                sources_version=version, answer_fingerprint=fingerprint, out_of_context=False,
                                state=AnswerState.COMPLETE)
        .exclude(content="")
        .order_by("-created_at")
        .first()
    )


def answered_question(guru: Guru, text: str, *, session_id: str | None = None,
                      channel: str | None = None) -> Question | None:
    """The latest complete answer to this question text (Gurubase's `fetch_existing`): in this conversation
    when one is given, and from this channel only when one is given (a widget must not read API answers)."""
    found = Question.objects.select_related("guru").filter(
        Q(user_question__iexact=normalise_question(text)) | Q(question__iexact=text.strip()), guru=guru,
        state=AnswerState.COMPLETE).exclude(content="")
    if session_id:
        found = found.filter(binge_id=session_id)
    if channel:
        found = found.filter(channel=channel)
    return found.order_by("-updated_at", "-pk").first()
