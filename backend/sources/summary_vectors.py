"""Summary nodes in the guru's collection: embedded like chunks, marked as summaries, linked to their source."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.urls import reverse

from backend.adapters import registry
from backend.pipeline.sanitize import neutralise_line, safe_link
from backend.pipeline.types import GURU_SUMMARY_SOURCE, SUMMARY_GENERATION, Chunk, SourceKind
from backend.sources.models import DataSource, Summarization

MAX_ROWS = 10000
EMBED_BATCH = 32


def vector_id(node_id: int) -> str:
    return f"summary-{node_id}"


def source_address(source: DataSource) -> str:
    """Where the source opens: its web address, else the file view of an upload (which checks access itself)."""
    if source.url:
        return source.url
    return reverse("answering:source-file", kwargs={"source_id": source.pk}) if source.file else ""


def _row_fields(node: Summarization, source: DataSource | None, guru_slug: str, guru_name: str) -> dict[str, Any]:
    if source is None:
        title, link = f"Summary of {guru_name}", reverse("answering:guru-summary", kwargs={"slug": guru_slug})
    else:
        name = source.title or source.url or source.file.name
        title = f"Summary of {name}" + ("" if node.is_source_root else f" (part {node.position + 1})")
        link = source_address(source)
    return {"title": neutralise_line(title)[:500], "link": safe_link(link), "doc_key": vector_id(node.pk),
            "chunk_index": 0, "summary": True, "level": node.level, "extract": node.extractive}


def summary_vectors_sync(*, guru_id: int, collection: str, source_id: int | None,
                         vectors: Mapping[str, Sequence[float]] | None = None) -> int:
    """Make the collection's summary rows of one source (None: the guru's own nodes) match the tree; returns
    how many were written. Rows are keyed by node id, so re-used nodes keep their vectors; `vectors` holds
    those already computed (by stored text), and only the others are embedded here."""
    store = registry.vector_store()
    nodes = Summarization.objects.filter(guru_id=guru_id).select_related("source", "guru")
    nodes = nodes.filter(source_id=source_id) if source_id is not None else nodes.filter(source__isnull=True)
    rows = list(nodes[:MAX_ROWS])
    owner = source_id if source_id is not None else GURU_SUMMARY_SOURCE
    # A tree none of whose nodes was ever written has nothing in the collection to compare with.
    stored = store.source_chunks(collection, source_id=owner, generation=SUMMARY_GENERATION, limit=MAX_ROWS) \
        if any(r.vector_written for r in rows) or not rows else []
    wanted = {vector_id(r.pk) for r in rows}
    store.delete_ids(collection, [h.chunk_id for h in stored if h.chunk_id not in wanted])
    present = {h.chunk_id for h in stored}
    todo = [r for r in rows if not r.vector_written or vector_id(r.pk) not in present]
    kind = _kind(guru_id, source_id)
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start:start + EMBED_BATCH]
        chunks = [Chunk(id=vector_id(r.pk), text=r.text, vector=tuple(v), source_id=owner,
                        generation=SUMMARY_GENERATION, kind=kind,
                        metadata=_row_fields(r, r.source, r.guru.slug, r.guru.name))
                  for r, v in zip(batch, _vectors(batch, vectors or {}), strict=True)]
        store.upsert(collection, chunks)
        Summarization.objects.filter(pk__in=[r.pk for r in batch]).update(vector_written=True)
    return len(todo)


def _vectors(rows: Sequence[Summarization], known: Mapping[str, Sequence[float]]) -> list[Sequence[float]]:
    """Each row's vector: the one computed when it was written, else embedded now (in one batch)."""
    missing = [r.text for r in rows if r.text not in known]
    embedded = dict(zip(missing, registry.embedder().embed_documents(missing), strict=True)) if missing else {}
    return [known[r.text] if r.text in known else embedded[r.text] for r in rows]


def _kind(guru_id: int, source_id: int | None) -> SourceKind:
    """The source's kind; the guru's own nodes take the kind most of its sources have."""
    if source_id is not None:
        kind = DataSource.objects.filter(pk=source_id).values_list("kind", flat=True).first()
        return SourceKind(kind or SourceKind.WEBSITE)
    kinds = list(DataSource.objects.filter(guru_id=guru_id).values_list("kind", flat=True))
    return SourceKind(max(set(kinds), key=kinds.count)) if kinds else SourceKind.WEBSITE
