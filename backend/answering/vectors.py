"""Question vectors for grouping refused questions: cached on the row with the embedder's id, filled in bulk.

Vectors of two embedders never mix: a vector stored by another embedder (or of another size) counts as missing.
"""

from __future__ import annotations

import numpy as np

from backend.adapters import registry
from backend.answering.models import Question

VECTOR_DTYPE = np.dtype("<f4")
SAVE_BATCH = 100


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


def question_embed(*, question_id: int) -> None:
    """Store one question's vector now (refusals, in the background), so the gaps page finds it ready."""
    question = Question.objects.filter(pk=question_id).only("id", "question", "user_question", "embedding",
                                                          "embedding_model").first()
    if question is not None:
        question_vectors([question])
