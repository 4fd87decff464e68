"""Retrieval for one question: embed the query, hybrid search, keep live chunks, rerank, build contexts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from backend.adapters import registry
from backend.gurus.models import CollectionStatus, Guru, VectorCollection
from backend.pipeline.breadth import Breadth, breadth_of, guru_names
from backend.pipeline.contexts import Context, ScoredChunk, build_contexts, live_only
from backend.pipeline.following_code import completed
from backend.pipeline.llm_types import Passage
from backend.pipeline.types import GURU_SUMMARY_SOURCE, SUMMARY_GENERATION, HybridHit
from backend.retrieval.neighbours import hop, linked_contexts
from backend.sources.models import DataSource, Summarization
from backend.sources.summary_vectors import vector_id

CANDIDATES = 40
MAX_DOCUMENTS = 5
CHUNKS_PER_DOCUMENT = 3
SUMMARY_CANDIDATES = 8
"""Summaries searched on their own for a broad question, beside the usual candidates."""
SUBJECT_SUPPORT = 0.9
"""A question about the guru's subject as a whole is, by construction, what the guru's summary answers."""


@dataclass(frozen=True)
class Retrieval:
    """Contexts best first, with the milliseconds each step took."""

    contexts: list[Context]
    timings: dict[str, int] = field(default_factory=dict)
    private_sources: frozenset[int] = frozenset()
    subject: bool = False
    """The question is about the guru's subject as a whole (what its summary answers)."""
    links: frozenset[tuple[int, int]] = frozenset()
    """(i, j): context i links to or imports context j, by the guru's source graph (empty when it is off)."""
    query_vector: tuple[float, ...] = ()
    """The query's embedding, when it was made: later steps grading against the same query reuse it."""


def _ms(since: float) -> int:
    return int((time.perf_counter() - since) * 1000)


def _live_generations(guru: Guru) -> tuple[dict[int, int], frozenset[int]]:
    rows = DataSource.objects.filter(guru=guru, indexed_generation__isnull=False).values_list(
        "pk", "indexed_generation", "private"
    )
    live = {pk: generation for pk, generation, _ in rows if generation is not None}  # all of them: filtered above
    return live, frozenset(pk for pk, _, private in rows if private)


def _summarised(guru: Guru) -> tuple[frozenset[int], str]:
    """Owners of searchable summary rows (GURU_SUMMARY_SOURCE for the guru's own), and the guru summary's row id."""
    rows = Summarization.objects.filter(guru=guru, vector_written=True).values_list("source_id", "is_root", "pk")
    owners = frozenset(GURU_SUMMARY_SOURCE if source_id is None else source_id for source_id, _, _ in rows)
    root = next((vector_id(pk) for _, is_root, pk in rows if is_root), "")
    return owners, root


def _candidates(name: str, query: str, query_vector: list[float], live: dict[int, int], summaries: frozenset[int],
                breadth: Breadth) -> list[HybridHit]:
    store = registry.vector_store()
    # The live generations filter inside the search: chunks of an unfinished or abandoned index run
    # must not take the candidate slots (thousands of orphans once crowded out every live chunk).
    found = store.search_hybrid(name, query_text=query, query_vector=query_vector, top_k=CANDIDATES, live=live,
                                summaries=summaries)
    if breadth.broad and summaries:
        # A broad question's words rarely match one summary better than many narrow chunks: the summaries
        # get candidate slots of their own, and the reranker decides between them and the chunks.
        seen = {h.hit.chunk_id for h in found}
        found += [h for h in store.search_hybrid(name, query_text=query, query_vector=query_vector,
                                                 top_k=SUMMARY_CANDIDATES, live={}, summaries=summaries)
                  if h.hit.chunk_id not in seen]
    return found


def retrieve(*, guru: Guru, query: str, rerank_threshold: float) -> Retrieval:
    """Contexts for `query` from the guru's live chunks and summaries; empty when nothing relevant is indexed."""
    record = VectorCollection.objects.filter(guru_id=guru.pk, status=CollectionStatus.READY).first()
    live, private = _live_generations(guru)
    if record is None or not live:
        return Retrieval([], private_sources=private)
    summaries, root = _summarised(guru)
    breadth = breadth_of(query, names=guru_names(guru.name, guru.slug))
    start = time.perf_counter()
    query_vector = registry.embedder().embed_query(query)
    timings = {"embed_ms": _ms(start)}
    start = time.perf_counter()
    candidates = _candidates(record.name, query, query_vector, live, summaries, breadth)
    timings["search_ms"] = _ms(start)
    if not candidates:
        return Retrieval([], timings, private, query_vector=tuple(query_vector))
    start = time.perf_counter()
    reranked = _reranked(query, query_vector, candidates)
    if guru.source_graph and not breadth.broad:
        reranked = _with_neighbours(guru, record.name, query, query_vector, candidates, reranked, live)
    if breadth.about_subject and root:
        reranked = [replace(c, score=max(c.score, SUBJECT_SUPPORT), selection=None) if c.chunk_id == root else c
                    for c in reranked]
    scored = [c for c in reranked if c.score >= rerank_threshold]
    timings["rerank_ms"] = _ms(start)
    found = live_only(scored, live, summaries)
    if not breadth.broad and any(c.generation != SUMMARY_GENERATION for c in found):
        # A narrow question is answered from the passages that say it: a summary of many pages would take
        # the place of a page the asker can open and check.
        found = [c for c in found if c.generation != SUMMARY_GENERATION]
    contexts = build_contexts(found, max_documents=MAX_DOCUMENTS, chunks_per_document=CHUNKS_PER_DOCUMENT)
    contexts = completed(contexts, lambda ids: {h.chunk_id: h.text for h in registry.vector_store().chunks(
        record.name, ids)})
    links = linked_contexts(guru.pk, [c.document for c in contexts]) if guru.source_graph else frozenset()
    return Retrieval(contexts, timings, private, subject=breadth.about_subject and bool(root), links=links,
                     query_vector=tuple(query_vector))


def _with_neighbours(guru: Guru, collection: str, query: str, query_vector: list[float], candidates: list[HybridHit],
                     reranked: list[ScoredChunk], live: dict[int, int]) -> list[ScoredChunk]:
    """The candidates as graded, and the chunks of documents one edge from the best of them, graded beside the
    candidates (so on the same scale: they compete for the answer's document slots) and naming where they were
    linked from. The candidates keep their own grades: the reranker's word rarities are relative to the passages
    it is given, and the neighbours must not move what the search found."""
    found = hop(guru.pk, collection, reranked, live)
    if not found.hits:
        return reranked
    graded = _reranked(query, query_vector, [*candidates, *found.hits])
    reached = [replace(c, metadata={**c.metadata, "linked_from": found.linked_from[c.chunk_id]})
               for c in graded if c.chunk_id in found.linked_from]
    return sorted([*reranked, *reached], key=lambda c: -c.score)


def _reranked(query: str, query_vector: list[float], candidates: list[HybridHit]) -> list[ScoredChunk]:
    """The candidates scored by the reranker, best first."""
    passages = [Passage(text=h.hit.text, title=str(h.hit.metadata.get("title", "")), vector=h.vector,
                        first_stage_score=h.hit.score) for h in candidates]
    results = registry.reranker().rerank(query, passages, query_vector=query_vector)
    return [
        ScoredChunk(chunk_id=candidates[r.index].hit.chunk_id, source_id=candidates[r.index].hit.source_id,
                    generation=candidates[r.index].hit.generation, kind=candidates[r.index].hit.kind,
                    text=candidates[r.index].hit.text, metadata=candidates[r.index].hit.metadata, score=r.score,
                    selection=r.selection)
        for r in results
    ]


def source_probe(
    *, guru: Guru, source_id: int, generation: int, query: str, top_k: int = CANDIDATES
) -> list[ScoredChunk]:
    """How one source's live chunks score for `query` under the answer path's own search and reranker.

    The same hybrid search and reranker as `retrieve`, restricted to this source; no threshold, so the
    maintainer also sees the chunks an answer would have dropped (compare with the guru's rerank threshold).
    """
    record = VectorCollection.objects.filter(guru_id=guru.pk, status=CollectionStatus.READY).first()
    if record is None or not query.strip():
        return []
    query_vector = registry.embedder().embed_query(query)
    candidates = registry.vector_store().search_hybrid(record.name, query_text=query, query_vector=query_vector,
                                                       top_k=top_k, live={source_id: generation})
    return _reranked(query, query_vector, candidates) if candidates else []
