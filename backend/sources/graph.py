"""The guru's source graph: its documents and the links, imports and shared text between them, rebuilt from the
live chunks after every index run (no model is called: everything comes from what the sources say)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from backend.adapters import registry
from backend.core.tasks import enqueue_on_commit
from backend.gurus.models import Guru
from backend.pipeline.contexts import join_chunks
from backend.pipeline.source_graph import GraphDocument, breadcrumbs, extract_edges
from backend.pipeline.types import SUMMARY_GENERATION, Hit
from backend.sources.models import DataSource, DocumentEdge, DocumentNode, SourceGraphState
from backend.sources.summaries import collection_name

logger = logging.getLogger(__name__)
MAX_SOURCE_CHUNKS = 20_000
"""Chunks read back per source and refresh (one index run writes at most 20,000 by default)."""
MAX_GURU_CHUNKS = 100_000
"""Chunks read per refresh over all of a guru's sources: the graph of a larger guru covers the sources read first."""
MAX_NODE_CHUNKS = 64
"""Chunk ids a node keeps, in reading order: what answering grades when it reaches the document by an edge."""
INSERT_BATCH = 1000


@dataclass(frozen=True)
class _Read:
    """A guru's documents as read from its live chunks, with each document's chunk ids in reading order."""

    documents: list[GraphDocument]
    chunk_ids: dict[tuple[int, str], list[str]]


def graph_queue(*, guru_id: int) -> None:
    """After commit, rebuild the guru's graph (always on: it embeds nothing and calls no model)."""
    enqueue_on_commit("sources.graph", guru_id=guru_id)


def graph_signature(guru_id: int) -> str:
    """What the graph is current for: the guru's live sources and when each was last indexed."""
    rows = DataSource.objects.filter(guru_id=guru_id, indexed_generation__isnull=False).order_by("pk").values_list(
        "pk", "indexed_generation", "last_indexed_at")
    return hashlib.sha256(repr(list(rows)).encode()).hexdigest()


def _documents(hits: Iterable[Hit], kind: str) -> list[tuple[GraphDocument, list[str]]]:
    """One source's chunks grouped into its documents, each with its whole text (overlaps kept once)."""
    by_key: dict[str, list[Hit]] = {}
    for hit in hits:
        if hit.generation != SUMMARY_GENERATION:
            by_key.setdefault(str(hit.metadata.get("doc_key", "")), []).append(hit)
    found = []
    for key, group in sorted(by_key.items()):
        group.sort(key=lambda h: int(h.metadata.get("chunk_index", 0)))
        first = group[0]
        # Where the document's reference-style links point, kept by the writer since the chunks drop them.
        targets = "".join(f"\n[{n}]: {t}" for n, t in enumerate(first.metadata.get("link_targets") or [])
                          if isinstance(t, str) and t and not any(c.isspace() for c in t))
        document = GraphDocument(source_id=first.source_id, key=key, title=str(first.metadata.get("title", "")),
                                 link=str(first.metadata.get("link", "")).split("#page=")[0],
                                 text=join_chunks([h.text for h in group]) + ("\n" + targets if targets else ""),
                                 kind=kind)
        found.append((document, [h.chunk_id for h in group]))
    return found


def _read(guru_id: int) -> _Read | None:
    collection = collection_name(guru_id)
    if collection is None:
        return None
    store, budget = registry.vector_store(), MAX_GURU_CHUNKS
    documents: list[GraphDocument] = []
    chunk_ids: dict[tuple[int, str], list[str]] = {}
    for source in DataSource.objects.filter(guru_id=guru_id, indexed_generation__isnull=False).order_by("pk"):
        if budget <= 0 or source.indexed_generation is None:
            logger.warning("guru %s: source graph covers its first %d chunks only", guru_id, MAX_GURU_CHUNKS)
            break
        hits = store.source_chunks(collection, source_id=source.pk, generation=source.indexed_generation,
                                   limit=min(MAX_SOURCE_CHUNKS, budget))
        budget -= len(hits)
        for document, ids in _documents(hits, str(source.kind).lower()):
            documents.append(document)
            chunk_ids[(document.source_id, document.key)] = ids
    return _Read(documents, chunk_ids)


def graph_refresh(*, guru_id: int) -> bool:
    """Rebuild the guru's graph from its live chunks and replace its rows; returns whether it wrote them.

    Idempotent. A guru whose sources changed while they were read is left alone: the newer run queues its own.
    """
    signature = graph_signature(guru_id)
    read = _read(guru_id)
    if read is None:
        return False
    edges = extract_edges(read.documents)
    with transaction.atomic():
        # The row lock (PostgreSQL) puts two refreshes of one guru one after the other.
        locked = Guru.objects.select_for_update().filter(pk=guru_id).order_by().values_list("pk", flat=True).first()
        if locked is None or graph_signature(guru_id) != signature:
            logger.info("guru %s changed while its graph was built; left to the newer run", guru_id)
            return False
        DocumentNode.objects.filter(guru_id=guru_id).delete()
        nodes = DocumentNode.objects.bulk_create([
            DocumentNode(guru_id=guru_id, source_id=d.source_id, key=d.key[:2000], title=d.title[:500],
                         link=d.link[:2000], chunk_ids=read.chunk_ids[(d.source_id, d.key)][:MAX_NODE_CHUNKS],
                         breadcrumbs=list(breadcrumbs(d))) for d in read.documents], batch_size=INSERT_BATCH)
        ids = {(d.source_id, d.key): node.pk for d, node in zip(read.documents, nodes, strict=True)}
        DocumentEdge.objects.bulk_create([
            DocumentEdge(guru_id=guru_id, origin_id=ids[(e.source_id, e.key)],
                         target_id=ids[(e.target_source_id, e.target_key)], kind=e.kind.value, score=e.score)
            for e in edges], batch_size=INSERT_BATCH)
        SourceGraphState.objects.update_or_create(guru_id=guru_id, defaults={
            "signature": signature, "documents": len(nodes), "edges": len(edges)})
    logger.info("guru %s: source graph of %d documents and %d edges", guru_id, len(nodes), len(edges))
    return True


def graph_recover() -> int:
    """Queue a rebuild for every guru whose graph is missing or older than its sources (also the backfill of
    gurus indexed before the graph existed, and of an imported install). Returns how many were queued."""
    stale = [guru_id for guru_id, known in Guru.objects.filter(sources__indexed_generation__isnull=False).distinct()
             .values_list("pk", "graph_state__signature") if known != graph_signature(guru_id)]
    for guru_id in stale:
        graph_queue(guru_id=guru_id)
    return len(stale)
