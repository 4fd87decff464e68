"""The gaps in a guru's sources: its recent refused questions, grouped by meaning.

Each question's vector is cached on its row (with the embedder's id), so a visit embeds only the
refusals it has not seen before, in one batch, and never mixes vectors of two embedders.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from backend.adapters import registry
from backend.answering.models import Question
from backend.gurus.models import Guru
from backend.pipeline.answer_types import Intent
from backend.pipeline.clustering import group_by_similarity
from backend.pipeline.errors import ServiceError

logger = logging.getLogger(__name__)

RECENT_REFUSALS = 500
SIMILARITY = {"loose": 0.6, "normal": 0.7, "strict": 0.8}
DEFAULT_SIMILARITY = "normal"
VECTOR_DTYPE = np.dtype("<f4")
SAVE_BATCH = 100
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
    choices: tuple[str, ...] = field(default=tuple(SIMILARITY))


def _text(question: Question) -> str:
    return (question.question or question.user_question)[:1000]


def _cached_vector(question: Question, embedder_id: str, dimension: int) -> np.ndarray | None:
    if question.embedding is None or question.embedding_model != embedder_id:
        return None
    vector = np.frombuffer(bytes(question.embedding), dtype=VECTOR_DTYPE)
    return vector if vector.shape == (dimension,) else None


def question_vectors(questions: list[Question]) -> np.ndarray:
    """One row per question: cached vectors as they are, the rest embedded in one batch and saved."""
    embedder, embedder_id = registry.embedder(), registry.embedder_id()
    rows = [_cached_vector(q, embedder_id, embedder.dimension) for q in questions]
    missing = [i for i, row in enumerate(rows) if row is None]
    if missing:
        fresh = embedder.embed_documents([_text(questions[i]) for i in missing])
        for i, vector in zip(missing, fresh, strict=True):
            rows[i] = np.asarray(vector, dtype=VECTOR_DTYPE)
            questions[i].embedding = rows[i].tobytes()
            questions[i].embedding_model = embedder_id
        Question.objects.bulk_update([questions[i] for i in missing], ["embedding", "embedding_model"],
                                     batch_size=SAVE_BATCH)
    if not rows:
        return np.zeros((0, embedder.dimension), dtype=VECTOR_DTYPE)
    return np.vstack(rows)  # type: ignore[arg-type] - every row is set above


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
        vectors = question_vectors(questions)
    except ServiceError as exc:
        logger.warning("embedding refused questions of guru %s failed: %s", guru.slug, exc)
        gaps = [Gap(q, [q]) for q in questions]
        return GapReport(gaps, len(questions), total, f"The questions could not be grouped: {exc}", similarity)
    groups = group_by_similarity(vectors, threshold=SIMILARITY[similarity])
    gaps = [Gap(questions[g.representative], [questions[i] for i in g.members]) for g in groups]
    return GapReport(gaps, len(questions), total, "", similarity)
