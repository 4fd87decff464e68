"""What a source indexed, for its page in the dashboard: its pages and its chunks, listed, filtered or scored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator

from backend.adapters import registry
from backend.answering.selectors import thresholds_for
from backend.gurus.models import CollectionStatus, VectorCollection
from backend.pipeline.contexts import locator_text
from backend.pipeline.types import Hit, SourceKind
from backend.retrieval.services import source_probe
from backend.sources.models import DataSource, SourcePage

CHUNKS_PER_PAGE = 20
# A source's chunks are read (text and metadata, never vectors) up to this many per view, then ordered
# here: the store has no order of its own. A larger source shows its first MAX_READ; a text filter runs in
# the store, so it still searches every chunk.
MAX_READ = 5000
QUERY_MAX = 500


@dataclass(frozen=True)
class ChunkView:
    """One chunk as the source page shows it (text escaped by the template)."""

    chunk_id: str
    text: str
    title: str
    link: str
    where: str
    chunk_index: int
    char_start: int | None
    score: float | None = None
    passes: bool | None = None
    """In question mode: whether the score clears the threshold an answer uses."""


@dataclass(frozen=True)
class ChunkListing:
    page: Page[ChunkView]
    mode: str
    query: str
    read_all: bool
    """False when the source has more chunks than one view reads (MAX_READ)."""
    threshold: float | None = None
    note: str = ""


def _safe_href(link: object) -> str:
    text = str(link or "").strip()
    return text if text.startswith(("https://", "http://", "/")) and not text.startswith("//") else ""


def _view(kind: SourceKind, chunk_id: str, text: str, meta: dict[str, Any], score: float | None = None,
          threshold: float | None = None) -> ChunkView:
    start = meta.get("char_start")
    return ChunkView(chunk_id=chunk_id, text=text, title=str(meta.get("title", "")), link=_safe_href(meta.get("link")),
                     where=locator_text(kind, meta) or str(meta.get("doc_key", "")),
                     chunk_index=int(meta.get("chunk_index", 0)), char_start=start if isinstance(start, int) else None,
                     score=score, passes=None if score is None or threshold is None else score >= threshold)


def _ordered(source: DataSource, hits: list[Hit]) -> list[Hit]:
    """Document order: a sitemap's pages as found, a PDF's pages, files by path; chunks by index within each."""
    position = dict(SourcePage.objects.filter(source=source).values_list("url", "position"))
    far = len(position) + 1

    def key(hit: Hit) -> tuple[int, int, str, int]:
        meta = hit.metadata
        doc = str(meta.get("doc_key", ""))
        page = meta.get("page")
        return (position.get(doc, far), page if isinstance(page, int) else 0, doc, int(meta.get("chunk_index", 0)))

    return sorted(hits, key=key)


def _collection(source: DataSource) -> str | None:
    record = VectorCollection.objects.filter(guru_id=source.guru_id, status=CollectionStatus.READY).first()
    return record.name if record is not None and source.indexed_generation is not None else None


def source_chunks_listing(*, source: DataSource, mode: str, query: str, number: Any) -> ChunkListing:
    """One page of the source's live chunks: all of them, those containing `query`, or scored for `query`."""
    query = query.strip()[:QUERY_MAX]
    mode = "question" if mode == "question" and query else "text"
    collection = _collection(source)
    views: list[ChunkView] = []
    read_all, threshold, note = True, None, ""
    kind = SourceKind(source.kind)
    if collection is None or source.indexed_generation is None:
        note = "Nothing of this source is indexed yet."
    elif mode == "question":
        threshold = thresholds_for(source.guru)[0]
        scored = source_probe(guru=source.guru, source_id=source.pk, generation=source.indexed_generation, query=query)
        views = [_view(kind, c.chunk_id, c.text, c.metadata, c.score, threshold) for c in scored]
    else:
        hits = registry.vector_store().source_chunks(collection, source_id=source.pk,
                                                     generation=source.indexed_generation, limit=MAX_READ + 1,
                                                     contains=query)
        read_all = len(hits) <= MAX_READ
        views = [_view(kind, h.chunk_id, h.text, h.metadata) for h in _ordered(source, hits[:MAX_READ])]
    page = Paginator(views, CHUNKS_PER_PAGE).get_page(number)
    return ChunkListing(page=page, mode=mode, query=query, read_all=read_all, threshold=threshold, note=note)
