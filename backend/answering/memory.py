"""The guru's memory: short notes from its maintainers (corrections, resolved 👎) and the model's proposals, one
collection revised in place rather than added to twice; approved notes are graded beside the sources and an
answer cites them as maintainer notes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from django.contrib.auth.models import User
from django.db import transaction

from backend.adapters import registry
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus, Question
from backend.core.errors import Conflict
from backend.gurus.models import Guru
from backend.pipeline.contexts import Context
from backend.pipeline.llm_types import Passage
from backend.pipeline.sanitize import neutralise
from backend.pipeline.types import SourceKind
from backend.retrieval.services import Retrieval

MAX_MEMORY_CHARS = 1000
MAX_MEMORIES = 1000
"""Notes per guru, every status: a memory is a few corrections and facts, not a second corpus."""
MEMORY_CONTEXTS = 2
"""Notes an answer may rest on, at most."""
MEMORY_FLOOR = 0.45
"""A note graded below this (by the reranker, beside the question) is not about the question."""
SAME_NOTE = 0.92
"""A proposed note this close (cosine) to one the guru has revises that one instead of adding a second."""
MEMORY_TITLE = "Maintainer note"
VECTOR_DTYPE = np.dtype("<f4")


@dataclass(frozen=True)
class Update:
    """One change the model proposes to the collection: a new note, or a revision of note `memory_id`."""

    text: str
    memory_id: int | None = None


def clean_text(text: str) -> str:
    """The note as stored and quoted: trimmed, neutralised like a source's text, bounded; ValueError when empty."""
    cleaned = neutralise(" ".join(str(text).split()))[:MAX_MEMORY_CHARS].strip()
    if not cleaned:
        raise ValueError("A memory needs some text.")
    return cleaned


def search_text(memory: Memory) -> str:
    """What a note is graded on against a question: its text, after the question it corrects when it corrects one
    (a correction is, first of all, the answer to that question asked again, in any words)."""
    asked = memory.question.question if memory.question_id is not None and memory.question is not None else ""
    return f"{asked}\n{memory.text}" if asked else memory.text


def _vector(text: str) -> tuple[bytes, str]:
    embedded = registry.embedder().embed_documents([text])[0]
    return np.asarray(embedded, dtype=VECTOR_DTYPE).tobytes(), registry.embedder_id()


def memory_add(*, guru: Guru, text: str, origin: MemoryOrigin, status: MemoryStatus,
               question: Question | None = None, author: User | None = None) -> Memory:
    """A new note, embedded now. Conflict when the guru holds MAX_MEMORIES already."""
    cleaned = clean_text(text)
    if Memory.objects.filter(guru=guru).count() >= MAX_MEMORIES:
        raise Conflict(f"This guru holds {MAX_MEMORIES} memories already: delete some first.")
    memory = Memory(guru=guru, text=cleaned, origin=origin, status=status, question=question, author=author)
    memory.embedding, memory.embedding_model = _vector(search_text(memory))
    memory.save()
    return memory


def memory_correct(*, question: Question, text: str, author: User | None,
                   origin: MemoryOrigin = MemoryOrigin.CORRECTION) -> Memory:
    """A maintainer's correction of an answer (or resolution of its 👎): approved at once, since a maintainer
    wrote it, and linked to the question."""
    return memory_add(guru=question.guru, text=text, origin=origin, status=MemoryStatus.APPROVED, question=question,
                      author=author)


def memory_edit(*, memory: Memory, text: str) -> Memory:
    memory.text = clean_text(text)
    memory.embedding, memory.embedding_model = _vector(search_text(memory))
    memory.save(update_fields=["text", "embedding", "embedding_model", "updated_at"])
    return memory


def memory_delete(*, memory: Memory) -> None:
    memory.delete()


def memory_approve(*, memory: Memory) -> Memory:
    """Approve a proposed note, or apply the revision proposed for an approved one."""
    if memory.proposed_text:
        memory.text, memory.proposed_text = memory.proposed_text, ""
        memory.embedding, memory.embedding_model = _vector(search_text(memory))
    memory.status = MemoryStatus.APPROVED
    memory.save()
    return memory


def memory_reject(*, memory: Memory) -> Memory:
    """Reject a proposed note; for an approved note with a pending revision, drop only the revision."""
    if memory.proposed_text and memory.status == MemoryStatus.APPROVED:
        memory.proposed_text = ""
    else:
        memory.status, memory.proposed_text = MemoryStatus.REJECTED, ""
    memory.save()
    return memory


def _closest(guru: Guru, vector: np.ndarray) -> tuple[Memory | None, float]:
    """The guru's note (not rejected) nearest to `vector`, and its cosine."""
    best, best_cosine = None, -1.0
    for memory in Memory.objects.filter(guru=guru).exclude(status=MemoryStatus.REJECTED):
        other = stored_vector(memory)
        if other is not None:
            cosine = float(other @ vector / ((np.linalg.norm(other) * np.linalg.norm(vector)) or 1.0))
            if cosine > best_cosine:
                best, best_cosine = memory, cosine
    return best, best_cosine


def memory_propose(*, guru: Guru, updates: Sequence[Update], question: Question | None = None) -> list[Memory]:
    """Apply the model's proposed updates as proposals a maintainer approves: a revision of a note the guru holds
    becomes that note's pending revision; a new note close to one it holds (SAME_NOTE) is taken as a revision of
    it; only a note unlike every other is added, as proposed. Returns the memories touched."""
    touched: list[Memory] = []
    with transaction.atomic():
        for update in updates:
            text = clean_text(update.text)
            target = Memory.objects.filter(guru=guru, pk=update.memory_id).first() if update.memory_id else None
            if target is None:
                vector, _ = _vector(text)
                nearest, cosine = _closest(guru, np.frombuffer(vector, dtype=VECTOR_DTYPE))
                target = nearest if nearest is not None and cosine >= SAME_NOTE else None
            if target is None:
                touched.append(memory_add(guru=guru, text=text, origin=MemoryOrigin.CONVERSATION,
                                          status=MemoryStatus.PROPOSED, question=question))
            elif target.text != text:
                _revise(target, text)
                touched.append(target)
    return touched


def _revise(memory: Memory, text: str) -> None:
    """A proposed note is rewritten in place; an approved (or rejected) one keeps its text until a maintainer
    approves the revision."""
    if memory.status == MemoryStatus.PROPOSED:
        memory_edit(memory=memory, text=text)
    else:
        memory.proposed_text = text
        memory.save(update_fields=["proposed_text", "updated_at"])


def stored_vector(memory: Memory) -> np.ndarray | None:
    """The note's vector in the current embedder's space; None when it was embedded by another one."""
    if memory.embedding is None or memory.embedding_model != registry.embedder_id():
        return None
    vector = np.frombuffer(bytes(memory.embedding), dtype=VECTOR_DTYPE)
    return vector if vector.shape == (registry.embedder().dimension,) else None


def _re_embedded(memories: list[Memory]) -> None:
    """Notes embedded by another embedder (or never) are embedded again, in one batch, and saved."""
    stale = [m for m in memories if stored_vector(m) is None]
    if not stale:
        return
    vectors = registry.embedder().embed_documents([search_text(m) for m in stale])
    for memory, vector in zip(stale, vectors, strict=True):
        memory.embedding = np.asarray(vector, dtype=VECTOR_DTYPE).tobytes()
        memory.embedding_model = registry.embedder_id()
    Memory.objects.bulk_update(stale, ["embedding", "embedding_model"])


def with_memories(guru: Guru, query: str, retrieval: Retrieval, *, rerank_threshold: float) -> Retrieval:
    """The retrieval with the guru's approved notes about the question first (at most MEMORY_CONTEXTS, graded by
    the reranker beside the question like a passage, kept from MEMORY_FLOOR): a maintainer's word on the
    question ranks above the sources it corrects."""
    memories = list(Memory.objects.filter(guru=guru, status=MemoryStatus.APPROVED).select_related("question")
                    [:MAX_MEMORIES]) if guru.memory else []
    if not memories:
        return retrieval
    _re_embedded(memories)
    vectors = [stored_vector(m) for m in memories]
    passages = [Passage(text=search_text(m), title=MEMORY_TITLE,
                        vector=None if v is None else tuple(float(x) for x in v))
                for m, v in zip(memories, vectors, strict=True)]
    query_vector = list(retrieval.query_vector) or registry.embedder().embed_query(query)  # embedded once
    graded = registry.reranker().rerank(query, passages, query_vector=query_vector)
    floor = max(MEMORY_FLOOR, rerank_threshold)
    chosen = [(memories[r.index], r.score) for r in graded if r.score >= floor][:MEMORY_CONTEXTS]
    if not chosen:
        return retrieval
    top = max((c.score for c in retrieval.contexts), default=0.0)
    notes = [Context(source_id=0, kind=SourceKind.MEMORY, title=MEMORY_TITLE, link="", text=m.text,
                     score=max(score, top), locator="", document=f"memory:{m.pk}") for m, score in chosen]
    # The sources keep their indices for the graph's links, shifted past the notes.
    links = frozenset((i + len(notes), j + len(notes)) for i, j in retrieval.links)
    return replace(retrieval, contexts=[*notes, *retrieval.contexts], links=links)
