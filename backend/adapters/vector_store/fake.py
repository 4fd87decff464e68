"""In-memory vector store with exact cosine and BM25 search; passes the same contract tests as Milvus."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from backend.pipeline.errors import DimensionMismatchError, PermanentServiceError
from backend.pipeline.fusion import bm25_rank, reciprocal_rank_fusion, term_counts
from backend.pipeline.types import SUMMARY_GENERATION, Chunk, CollectionInfo, Hit, HybridHit


@dataclass
class _Collection:
    dimension: int
    rows: dict[str, Chunk] = field(default_factory=dict)
    # Term counts per chunk id, kept beside `rows` so a BM25 search does not re-tokenize every chunk.
    terms: dict[str, Counter[str]] = field(default_factory=dict)

    def remove(self, chunk_id: str) -> None:
        self.rows.pop(chunk_id, None)
        self.terms.pop(chunk_id, None)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class InMemoryVectorStore:
    """A process-local store; state is shared by instances created with the same `namespace`."""

    _namespaces: dict[str, dict[str, _Collection]] = {}
    _lock = threading.Lock()

    def __init__(self, *, namespace: str = "default") -> None:
        with self._lock:
            self._collections = self._namespaces.setdefault(namespace, {})

    @classmethod
    def reset(cls) -> None:
        """Forget every namespace (tests call this between cases)."""
        with cls._lock:
            for collections in cls._namespaces.values():
                collections.clear()

    def ensure_collection(self, name: str, *, dimension: int) -> None:
        with self._lock:
            existing = self._collections.get(name)
            if existing is None:
                self._collections[name] = _Collection(dimension=dimension)
            elif existing.dimension != dimension:
                raise DimensionMismatchError(
                    collection=name, collection_dim=existing.dimension, embedder_dim=dimension
                )

    def rename_collection(self, old: str, new: str) -> None:
        with self._lock:
            if old in self._collections and new in self._collections:
                raise PermanentServiceError(
                    f"Cannot rename collection '{old}' to '{new}': '{new}' already exists."
                )
            if old in self._collections:
                self._collections[new] = self._collections.pop(old)

    def drop_collection(self, name: str) -> None:
        with self._lock:
            self._collections.pop(name, None)

    def collection_info(self, name: str) -> CollectionInfo | None:
        with self._lock:
            found = self._collections.get(name)
            if found is None:
                return None
            return CollectionInfo(name=name, dimension=found.dimension, row_count=len(found.rows), loaded=True)

    def list_collections(self) -> list[str]:
        with self._lock:
            return sorted(self._collections)

    def unloaded_collections(self, *, prefix: str = "") -> list[str]:
        return []  # an in-memory collection is always searchable

    @staticmethod
    def _visible(chunk: Chunk, live: Mapping[int, int] | None, summaries: Collection[int] = ()) -> bool:
        if chunk.generation == SUMMARY_GENERATION and chunk.source_id in summaries:
            return True
        return live is None or live.get(chunk.source_id) == chunk.generation

    def _get(self, name: str) -> _Collection:
        found = self._collections.get(name)
        if found is None:
            raise PermanentServiceError(f"Collection '{name}' does not exist.")
        return found

    def upsert(self, name: str, chunks: Sequence[Chunk]) -> None:
        with self._lock:
            target = self._get(name)
            for chunk in chunks:
                if len(chunk.vector) != target.dimension:
                    raise DimensionMismatchError(
                        collection=name, collection_dim=target.dimension, embedder_dim=len(chunk.vector)
                    )
                target.rows[chunk.id] = chunk
                target.terms[chunk.id] = term_counts(chunk.text)

    def delete_where(
        self, name: str, *, source_id: int, generation_lt: int | None = None, generation: int | None = None
    ) -> None:
        with self._lock:
            target = self._get(name)
            doomed = [
                cid
                for cid, c in target.rows.items()
                if c.source_id == source_id
                and (generation_lt is None or 0 <= c.generation < generation_lt)
                and (generation is None or c.generation == generation)
            ]
            for cid in doomed:
                target.remove(cid)

    def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        with self._lock:
            target = self._get(name)
            for cid in ids:
                target.remove(cid)

    def scan(self, name: str, *, batch_size: int = 1000) -> Iterator[list[Chunk]]:
        with self._lock:
            rows = list(self._get(name).rows.values())
        for start in range(0, len(rows), batch_size):
            yield rows[start : start + batch_size]

    def source_chunks(
        self, name: str, *, source_id: int, generation: int, limit: int, contains: str = ""
    ) -> list[Hit]:
        with self._lock:
            rows = [c for c in self._get(name).rows.values()
                    if c.source_id == source_id and c.generation == generation and contains in c.text]
        return [_hit(c, 0.0) for c in rows[:limit]]

    def chunks(self, name: str, ids: Sequence[str]) -> list[Hit]:
        with self._lock:
            rows = self._get(name).rows
            return [_hit(rows[cid], 0.0) for cid in dict.fromkeys(ids) if cid in rows]

    def chunk_vectors(self, name: str, ids: Sequence[str]) -> list[HybridHit]:
        with self._lock:
            rows = self._get(name).rows
            return [HybridHit(hit=_hit(rows[cid], 0.0), vector=rows[cid].vector, dense_rank=None, sparse_rank=None)
                    for cid in dict.fromkeys(ids) if cid in rows]

    def search_hybrid(
        self, name: str, *, query_text: str, query_vector: Sequence[float], top_k: int, candidates: int = 50,
        live: Mapping[int, int] | None = None, summaries: Collection[int] = (),
    ) -> list[HybridHit]:
        with self._lock:
            found = self._get(name)
            # Filtered before ranking, as Milvus filters inside the search: other generations take no slot.
            rows = {cid: c for cid, c in found.rows.items() if self._visible(c, live, summaries)}
            terms = {cid: found.terms[cid] for cid in rows}
        # Each leg fetches at least top_k so a caller asking for more than `candidates` still gets top_k.
        limit = max(candidates, top_k)
        dense = sorted(((_cosine(query_vector, c.vector), c.id) for c in rows.values()), key=lambda p: (-p[0], p[1]))
        sparse = bm25_rank(query_text, terms)
        fused = reciprocal_rank_fusion([[cid for _, cid in dense[:limit]], [cid for cid, _ in sparse[:limit]]])
        return [
            HybridHit(hit=_hit(rows[f.key], f.score), vector=rows[f.key].vector, dense_rank=f.ranks[0],
                      sparse_rank=f.ranks[1])
            for f in fused[:top_k]
        ]

    def search_dense(
        self, name: str, vector: Sequence[float], *, top_k: int, source_ids: Sequence[int] | None = None,
        live: Mapping[int, int] | None = None,
    ) -> list[Hit]:
        with self._lock:
            rows = [c for c in self._get(name).rows.values() if self._visible(c, live)]
        allowed = None if source_ids is None else set(source_ids)
        scored = [(_cosine(vector, c.vector), c) for c in rows if allowed is None or c.source_id in allowed]
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [_hit(c, score) for score, c in scored[:top_k]]


def _hit(chunk: Chunk, score: float) -> Hit:
    return Hit(
        chunk_id=chunk.id,
        score=score,
        text=chunk.text,
        source_id=chunk.source_id,
        generation=chunk.generation,
        kind=chunk.kind,
        metadata=dict(chunk.metadata),
    )
