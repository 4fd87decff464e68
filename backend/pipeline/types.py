"""Typed values passed between the pipeline, adapters and services."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class SourceKind(str, enum.Enum):
    """Kinds of data source a guru can learn from."""

    YOUTUBE = "YOUTUBE"
    WEBSITE = "WEBSITE"
    PDF = "PDF"
    GITHUB_REPO = "GITHUB_REPO"
    MEMORY = "MEMORY"
    """A maintainer note of the guru's memory (answering.memory), never a data source's chunk."""


SUMMARY_GENERATION = -1
"""The generation of summary rows: they outlive index runs (re-used by hash), so no run's cleanup deletes them."""
GURU_SUMMARY_SOURCE = 0
"""The source id of rows summarising the whole guru (no source has id 0)."""


@dataclass(frozen=True)
class Chunk:
    """One indexed piece of a source, as stored in the vector store."""

    id: str
    text: str
    vector: tuple[float, ...]
    source_id: int
    generation: int
    kind: SourceKind
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """A chunk returned by a search, with its similarity score (higher is better)."""

    chunk_id: str
    score: float
    text: str
    source_id: int
    generation: int
    kind: SourceKind
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HybridHit:
    """A hybrid-search result: the chunk, its fused score, and its stored dense vector for reranking."""

    hit: Hit
    vector: tuple[float, ...]
    dense_rank: int | None
    sparse_rank: int | None


@dataclass(frozen=True)
class CollectionInfo:
    """What the vector store knows about one collection."""

    name: str
    dimension: int
    row_count: int
    loaded: bool
