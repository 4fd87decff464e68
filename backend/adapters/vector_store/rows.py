"""Milvus rows read back as the pipeline's types (chunks, hits, hits with their stored vectors)."""

from __future__ import annotations

from typing import Any

from backend.pipeline.fusion import Fused
from backend.pipeline.types import Chunk, Hit, HybridHit, SourceKind


def hybrid_hit(row: dict[str, Any], fused: Fused | None = None) -> HybridHit:
    """A row read with its vector; without `fused` (read by id, not found by a search) it has no leg ranks."""
    return HybridHit(
        hit=hit(row, str(row["id"]) if fused is None else fused.key, 0.0 if fused is None else fused.score),
        vector=tuple(float(x) for x in row["vector"]),
        dense_rank=None if fused is None else fused.ranks[0],
        sparse_rank=None if fused is None else fused.ranks[1],
    )


def chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(id=str(row["id"]), text=row["text"], vector=tuple(float(x) for x in row["vector"]),
                 source_id=int(row["source_id"]), generation=int(row["generation"]), kind=SourceKind(row["kind"]),
                 metadata=dict(row.get("metadata") or {}))


def hit(entity: dict[str, Any], chunk_id: str, score: float) -> Hit:
    return Hit(
        chunk_id=chunk_id,
        score=score,
        text=entity["text"],
        source_id=int(entity["source_id"]),
        generation=int(entity["generation"]),
        kind=SourceKind(entity["kind"]),
        metadata=dict(entity.get("metadata") or {}),
    )
