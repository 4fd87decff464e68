"""One hop along the source graph: the pages and files the best documents found link to, are linked from or
import, read by id so the reranker grades them beside what the search found."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db.models import Q

from backend.adapters import registry
from backend.pipeline.contexts import ScoredChunk
from backend.pipeline.types import SUMMARY_GENERATION, HybridHit
from backend.sources.models import DocumentEdge, DocumentNode, EdgeKind

SEED_DOCUMENTS = 3
"""The best documents found are where the hop starts: a link from the fifth page is rarely about the question."""
MAX_NEIGHBOURS = 6
"""Documents reached, at most (the nearest seeds' first)."""
CHUNKS_PER_NEIGHBOUR = 8
"""Chunks of each neighbour graded: its opening, where a page says what it is about."""
HOP_KINDS = (EdgeKind.LINK, EdgeKind.IMPORT)
"""Edges followed. A duplicate adds no text; it is collapsed where it is found (contexts.collapse_duplicates)."""


@dataclass(frozen=True)
class Hop:
    """Chunks of documents one edge away from the seeds, and for each chunk id the seed's title it was reached from."""

    hits: list[HybridHit]
    linked_from: Mapping[str, str]


def seeds(ranked: Sequence[ScoredChunk], *, limit: int = SEED_DOCUMENTS) -> list[tuple[int, str]]:
    """The best documents among reranked chunks (a summary is no document of a source), best first."""
    found: dict[tuple[int, str], None] = {}
    for chunk in ranked:
        if chunk.generation != SUMMARY_GENERATION:
            found.setdefault((chunk.source_id, str(chunk.metadata.get("doc_key", ""))), None)
        if len(found) >= limit:
            break
    return list(found)


def _neighbour_nodes(guru_id: int, start: Sequence[tuple[int, str]],
                     exclude: set[tuple[int, str]]) -> list[tuple[DocumentNode, str]]:
    """Nodes one hop from the seeds (either direction), not among `exclude`, nearest seeds first."""
    match = Q()
    for source_id, key in start:
        match |= Q(source_id=source_id, key=key)
    nodes = {(n.source_id, n.key): n for n in DocumentNode.objects.filter(match, guru_id=guru_id)} if start else {}
    order = {nodes[s].pk: i for i, s in enumerate(start) if s in nodes}
    if not order:
        return []
    edges = DocumentEdge.objects.filter(Q(origin_id__in=order) | Q(target_id__in=order), guru_id=guru_id,
                                        kind__in=HOP_KINDS).select_related("origin", "target")
    reached: dict[int, tuple[int, DocumentNode, str]] = {}
    for edge in edges:
        for seed, other in ((edge.origin, edge.target), (edge.target, edge.origin)):
            if seed.pk in order and other.pk not in order and (other.source_id, other.key) not in exclude:
                rank = order[seed.pk]
                if other.pk not in reached or rank < reached[other.pk][0]:
                    reached[other.pk] = (rank, other, seed.title)
    nearest = sorted(reached.values(), key=lambda r: (r[0], r[1].pk))[:MAX_NEIGHBOURS]
    return [(node, title) for _, node, title in nearest]


def hop(guru_id: int, collection: str, ranked: Sequence[ScoredChunk], live: Mapping[int, int]) -> Hop:
    """The live chunks of the documents one edge from the best ones found, except documents already found."""
    found = {(c.source_id, str(c.metadata.get("doc_key", ""))) for c in ranked}
    nodes = _neighbour_nodes(guru_id, seeds(ranked), found)
    ids = {chunk_id: title for node, title in nodes for chunk_id in node.chunk_ids[:CHUNKS_PER_NEIGHBOUR]}
    hits = registry.vector_store().chunk_vectors(collection, list(ids)) if ids else []
    # A node's chunk ids are those of the index its graph was built from: a newer run's are not read until the
    # graph is rebuilt after it, and an older run's that survive are never answered from.
    hits = [h for h in hits if live.get(h.hit.source_id) == h.hit.generation]
    return Hop(hits, {h.hit.chunk_id: ids[h.hit.chunk_id] for h in hits})


def linked_contexts(guru_id: int, documents: Sequence[str]) -> frozenset[tuple[int, int]]:
    """(i, j) for each of the documents ("source_id:key", as contexts name them) that links to or imports
    document j of the same list: what a page itself says its reader should go on to."""
    refs: dict[tuple[int, str], int] = {}
    for i, document in enumerate(documents):
        owner, _, key = document.partition(":")
        if owner.isdigit():
            refs[(int(owner), key)] = i
    if len(refs) < 2:
        return frozenset()
    match = Q()
    for source_id, key in refs:
        match |= Q(source_id=source_id, key=key)
    nodes = {n.pk: refs[(n.source_id, n.key)] for n in DocumentNode.objects.filter(match, guru_id=guru_id)}
    edges = DocumentEdge.objects.filter(origin_id__in=nodes, target_id__in=nodes, kind__in=HOP_KINDS)
    return frozenset((nodes[o], nodes[t]) for o, t in edges.values_list("origin_id", "target_id"))
