"""Question vectors for grouping refused questions: cached on the row with the embedder's id, filled in bulk.

Vectors of two embedders never mix: a vector stored by another embedder (or of another size) counts as missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.adapters import registry
from backend.answering.models import Question

VECTOR_DTYPE = np.dtype("<f4")
SAVE_BATCH = 100
EMBED_BATCH = 64  # per embedder call and transaction, so a long backfill saves as it goes
_COLUMNS = ("id", "question", "user_question", "embedding", "embedding_model")


def _text(question: Question) -> str:
    return (question.question or question.user_question)[:1000]


def _cached_vector(question: Question, embedder_id: str, dimension: int) -> np.ndarray | None:
    if question.embedding is None or question.embedding_model != embedder_id:
        return None
    vector = np.frombuffer(bytes(question.embedding), dtype=VECTOR_DTYPE)
    return vector if vector.shape == (dimension,) else None


@dataclass(frozen=True)
class ReadyVectors:
    """The questions that have a vector now (`indices` into the input, rows of `vectors`) and those still without."""

    indices: list[int]
    vectors: np.ndarray
    pending_ids: list[int]


def ready_vectors(questions: list[Question], *, embed_at_most: int) -> ReadyVectors:
    """Cached vectors plus at most `embed_at_most` embedded now (newest first); the rest are left pending.

    Bounds what one page view embeds: after an embedder change every cached vector is stale at once.
    """
    embedder, embedder_id = registry.embedder(), registry.embedder_id()
    cached = [_cached_vector(q, embedder_id, embedder.dimension) for q in questions]
    missing = [i for i, row in enumerate(cached) if row is None]
    now, later = missing[:embed_at_most], missing[embed_at_most:]
    fresh = question_vectors([questions[i] for i in now])
    for i, row in zip(now, fresh, strict=True):
        cached[i] = row
    ready = [(i, row) for i, row in enumerate(cached) if row is not None]
    indices = [i for i, _ in ready]
    vectors = np.vstack([row for _, row in ready]) if ready else np.zeros((0, embedder.dimension), VECTOR_DTYPE)
    return ReadyVectors(indices, vectors, [questions[i].pk for i in later])


def question_vectors(questions: list[Question]) -> np.ndarray:
    """One row per question: cached vectors as they are, the rest embedded in one batch and saved."""
    embedder, embedder_id = registry.embedder(), registry.embedder_id()
    rows = [_cached_vector(q, embedder_id, embedder.dimension) for q in questions]
    missing = [i for i, row in enumerate(rows) if row is None]
    if missing:
        fresh = embedder.embed_documents([_text(questions[i]) for i in missing])
        for i, vector in zip(missing, fresh, strict=True):
            row = np.asarray(vector, dtype=VECTOR_DTYPE)
            rows[i] = row
            questions[i].embedding = row.tobytes()
            questions[i].embedding_model = embedder_id
        Question.objects.bulk_update([questions[i] for i in missing], ["embedding", "embedding_model"],
                                     batch_size=SAVE_BATCH)
    filled = [row for row in rows if row is not None]  # all of them: the missing rows were embedded above
    if not filled:
        return np.zeros((0, embedder.dimension), dtype=VECTOR_DTYPE)
    return np.vstack(filled)


def questions_embed(*, question_ids: list[int]) -> int:
    """Store the vectors these questions lack (in the background), so the gaps page finds them ready."""
    done = 0
    for start in range(0, len(question_ids), EMBED_BATCH):
        batch = list(Question.objects.filter(pk__in=question_ids[start:start + EMBED_BATCH]).only(*_COLUMNS))
        question_vectors(batch)
        done += len(batch)
    return done
