"""Suggested follow-ups: the guru's approved example questions not yet asked, closest to the last question first."""

from __future__ import annotations

import hashlib
import logging
import uuid

import numpy as np
from django.core.cache import cache

from backend.adapters import registry
from backend.answering.models import Channel, Question
from backend.answering.vectors import VECTOR_DTYPE, question_vectors
from backend.gurus.examples import guru_example_texts
from backend.gurus.models import Guru
from backend.pipeline.errors import ServiceError

logger = logging.getLogger(__name__)

MAX_SUGGESTIONS = 3
# At or above this cosine an example says what the visitor just asked in other words (all-MiniLM-L6-v2:
# "How do I retry a task?" ~ "How can I re-run a failed task?" 0.83; a merely related question ~0.4-0.6).
PARAPHRASE_COSINE = 0.8
_VECTOR_TTL_S = 24 * 3600  # example vectors change only when the wording or the embedder does (both in the key)


def _key(text: str) -> str:
    """What makes two questions "the same" here: case, blanks and a final question mark aside."""
    return " ".join(text.casefold().split()).rstrip(" ?")


def _asked(guru: Guru, binge_id: uuid.UUID | None, slug: str) -> tuple[Question | None, list[str]]:
    """The question the visitor just asked (by slug, in their conversation when known) and every text asked
    in that conversation."""
    found = Question.objects.filter(guru=guru, channel=Channel.WIDGET, slug=slug) if slug else None
    if found is not None and binge_id is not None:
        found = found.filter(binge_id=binge_id)
    last = found.order_by("-created_at").first() if found is not None else None
    binge = binge_id if binge_id is not None else (last.binge_id if last is not None else None)
    if binge is None:
        return last, []
    rows = Question.objects.filter(guru=guru, binge_id=binge).values_list("question", "user_question")[:200]
    return last, [text for row in rows for text in row]


def _example_vectors(texts: list[str]) -> np.ndarray:
    """The examples' vectors (as questions, like question_vectors), cached per wording and embedder."""
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:32]
    key = f"widget:example-vectors:{registry.embedder_id()}:{digest}"
    cached = cache.get(key)
    if isinstance(cached, bytes):
        vectors = np.frombuffer(cached, dtype=VECTOR_DTYPE)
        if vectors.size and vectors.size % len(texts) == 0:
            return vectors.reshape(len(texts), -1)
    vectors = np.asarray(registry.embedder().embed_documents(texts), dtype=VECTOR_DTYPE)
    cache.set(key, vectors.tobytes(), _VECTOR_TTL_S)
    return vectors


def _ranked(texts: list[str], asked: Question) -> list[str]:
    """`texts` by similarity to the asked question (vectors are unit length: the dot product is the cosine),
    without those that only rephrase it; in the maintainer's order when the embedder is unavailable, since a
    suggestion must never fail an answer."""
    try:
        query = question_vectors([asked])[0]
        examples = _example_vectors(texts)
    except ServiceError as exc:
        logger.warning("follow-up suggestions unranked: the embedder failed (%s)", exc)
        return texts
    if examples.shape[1] != query.shape[0]:
        return texts
    scores = examples @ query
    order = sorted(range(len(texts)), key=lambda i: -float(scores[i]))
    return [texts[i] for i in order if float(scores[i]) < PARAPHRASE_COSINE]


def follow_up_suggestions(*, guru: Guru, binge_id: uuid.UUID | None, slug: str, question_text: str) -> list[str]:
    """At most MAX_SUGGESTIONS approved examples the conversation has not asked, most related first; [] if none."""
    examples = guru_example_texts(guru=guru)
    if not examples:
        return []
    last, asked = _asked(guru, binge_id, slug)
    seen = {_key(text) for text in [*asked, question_text] if text}
    fresh = [text for text in examples if _key(text) not in seen]
    if fresh and last is not None:
        fresh = _ranked(fresh, last)
    return fresh[:MAX_SUGGESTIONS]
