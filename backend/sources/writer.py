"""Buffers chunks, embeds them in batches and writes dense vectors and BM25 text together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.pipeline.budget import IngestBudget
from backend.pipeline.chunking import ChunkingConfig, TextChunk, chunk_id, split_document
from backend.pipeline.ingest_types import ContentType, Document
from backend.pipeline.ports import Embedder, VectorStore
from backend.pipeline.sanitize import neutralise_line, safe_link
from backend.pipeline.types import Chunk, SourceKind
from backend.pipeline.visible import link_targets

EMBED_BATCH = 32
LinkFor = Callable[[Document, TextChunk], str]


def plain_link(doc: Document, chunk: TextChunk) -> str:
    """The document's own link, with the locator the chunk needs for a deep link."""
    if "page" in chunk.locator and "#page=" not in doc.link:
        return f"{doc.link}#page={chunk.locator['page']}"
    return doc.link


@dataclass(frozen=True)
class PageRecord:
    """One page of a multi-page website source as this run found it (failed pages have an error, no chunks)."""

    url: str
    title: str
    chunks: int = 0
    content_hash: str = ""
    error: str = ""


@dataclass(frozen=True)
class WriteResult:
    """What an index run wrote."""

    chunks: int
    title: str
    note: str = ""
    """What the maintainer should know although the source indexed (e.g. skipped pages)."""
    pages: tuple[PageRecord, ...] = ()
    """The pages of a sitemap or crawl source, in the order found; empty for every other source."""
    first_page_title: str = ""
    """The first page's title: what earlier versions named a sitemap source after (replaced by its site name)."""


@dataclass
class ChunkWriter:
    """Splits documents and writes their chunks in embedding-sized batches; `flush()` at the end."""

    store: VectorStore
    embedder: Embedder
    collection: str
    source_id: int
    generation: int
    kind: SourceKind
    config: ChunkingConfig
    link_for: LinkFor = plain_link
    budget: IngestBudget | None = None
    """The source's bounds (text, chunks, time, memory), charged before anything is split or embedded."""
    written: int = 0
    _pending: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, doc: Document, *, version: str = "") -> int:
        """Queue a document's chunks; returns how many it produced. BudgetExceeded once a bound is passed."""
        if self.budget is not None:
            self.budget.take_text(len(doc.text))
        chunks = split_document(doc, self.config, self.embedder.count_tokens)
        if self.budget is not None:
            self.budget.take_chunks(len(chunks))
        # Reference-style links lose their definitions in the chunks; the first chunk keeps where they point,
        # for the source graph (sources.graph).
        targets = link_targets(doc.text) if doc.content_type is ContentType.MARKDOWN else []
        for chunk in chunks:
            cid = chunk_id(source_id=self.source_id, generation=self.generation, doc_key=doc.key,
                           version=version, index=chunk.index)
            # Titles and links reach answers' references: no live tag, no scheme but the web's.
            metadata = {"title": neutralise_line(doc.title), "link": safe_link(self.link_for(doc, chunk)),
                        "doc_key": doc.key, "chunk_index": chunk.index, "char_start": chunk.start, **chunk.locator,
                        **({"link_targets": targets} if targets and chunk.index == 0 else {})}
            self._pending.append((cid, chunk.text, metadata))
        self.flush(final=False)
        return len(chunks)

    def flush(self, *, final: bool = True) -> None:
        """Embed and upsert full batches, and with `final` the remainder too."""
        while len(self._pending) >= EMBED_BATCH or (final and self._pending):
            if self.budget is not None:
                self.budget.check()  # an embedding batch takes about a second: time and memory between them
            batch, self._pending = self._pending[:EMBED_BATCH], self._pending[EMBED_BATCH:]
            vectors = self.embedder.embed_documents([text for _, text, _ in batch])
            rows = [
                Chunk(id=cid, text=text, vector=tuple(vector), source_id=self.source_id,
                      generation=self.generation, kind=self.kind, metadata=metadata)
                for (cid, text, metadata), vector in zip(batch, vectors, strict=True)
            ]
            self.store.upsert(self.collection, rows)
            self.written += len(rows)
