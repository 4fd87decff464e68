"""The gaps in a guru's sources: its recent refused questions, grouped by meaning.

Each question's vector is cached on its row (answering.vectors; refusals are embedded in the background
as they happen). A visit embeds at most EMBED_NOW missing ones itself and hands the rest to the worker, so
the page stays fast after an embedder change (every vector stale at once) and fills in within moments.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from kombu.exceptions import OperationalError

from backend.answering.models import Question
from backend.answering.vectors import ready_vectors
from backend.core.counters import counter_store
from backend.gurus.models import Guru
from backend.pipeline.answer_types import Intent
from backend.pipeline.clustering import group_by_similarity
from backend.pipeline.errors import ServiceError

logger = logging.getLogger(__name__)

RECENT_REFUSALS = 500
SIMILARITY = {"loose": 0.6, "normal": 0.7, "strict": 0.8}
DEFAULT_SIMILARITY = "normal"
EMBED_NOW = 16  # missing vectors one visit embeds itself; MiniLM does ~130 short questions a second
BACKFILL_LOCK_SECONDS = 120  # one queued backfill per guru at a time, however often the page is reloaded
COLUMNS = ("id", "question", "user_question", "created_at", "channel", "embedding", "embedding_model")


@dataclass(frozen=True)
class Gap:
    """Questions that ask about the same missing topic; `representative` stands for them all."""

    representative: Question
    members: list[Question]  # newest first

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def last_asked(self) -> datetime:
        return max(q.created_at for q in self.members)


@dataclass(frozen=True)
class GapReport:
    gaps: list[Gap]
    considered: int  # refusals grouped (at most RECENT_REFUSALS)
    total: int  # all refusals of the guru
    problem: str = ""  # set when the embedder failed and the questions are listed ungrouped
    similarity: str = DEFAULT_SIMILARITY
    pending: int = 0  # refusals left out until the worker has embedded them
    choices: tuple[str, ...] = field(default=tuple(SIMILARITY))


def recent_refusals(guru: Guru, *, limit: int = RECENT_REFUSALS) -> list[Question]:
    """The guru's newest questions its sources could not answer (not greetings or gibberish)."""
    return list(Question.objects.filter(guru=guru, out_of_context=True).exclude(intent=Intent.INVALID.value)
                .only(*COLUMNS).order_by("-created_at", "-id")[:limit])


def gap_report(guru: Guru, *, similarity: str = DEFAULT_SIMILARITY, limit: int = RECENT_REFUSALS) -> GapReport:
    """The recent refusals grouped by similarity, biggest gaps first."""
    similarity = similarity if similarity in SIMILARITY else DEFAULT_SIMILARITY
    questions = recent_refusals(guru, limit=limit)
    total = len(questions) if len(questions) < limit else (
        Question.objects.filter(guru=guru, out_of_context=True).exclude(intent=Intent.INVALID.value).count())
    try:
        ready = ready_vectors(questions, embed_at_most=EMBED_NOW)
    except ServiceError as exc:
        logger.warning("embedding refused questions of guru %s failed: %s", guru.slug, exc)
        gaps = [Gap(q, [q]) for q in questions]
        return GapReport(gaps, len(questions), total, f"The questions could not be grouped: {exc}", similarity)
    if ready.pending_ids:
        _backfill(guru, ready.pending_ids)
    groups = group_by_similarity(ready.vectors, threshold=SIMILARITY[similarity])
    kept = [questions[i] for i in ready.indices]
    gaps = [Gap(kept[g.representative], [kept[i] for i in g.members]) for g in groups]
    return GapReport(gaps, len(questions), total, "", similarity, pending=len(ready.pending_ids))


def _backfill(guru: Guru, question_ids: list[int]) -> None:
    """Queue the embedding of the vectors this visit left out, unless a backfill was queued a moment ago."""
    from backend.answering.tasks import questions_embed

    # A lease, not a lock held for the block: it lets the next visit skip queueing for a while.
    store, key = counter_store(), f"gaps-backfill:{guru.pk}"
    if not store.claim(key, "queued", ttl=BACKFILL_LOCK_SECONDS):
        return
    try:
        questions_embed.delay(question_ids=question_ids)
    except (OperationalError, ServiceError) as exc:
        # Each visit still embeds EMBED_NOW itself, so the page converges even without a worker.
        logger.warning("could not queue the embedding of %s questions: %s", len(question_ids), exc)
        store.release(key, "queued")
