"""What a non-Git source consists of (a Plan of documents, loaded lazily) and a fetched page as a document."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from backend.pipeline.ingest_types import ContentType, Document, FetchedPage


@dataclass
class Plan:
    """The units a source consists of, loaded lazily, and the units that failed on their own (filled as loaded)."""

    total: int
    documents: Iterator[Document]
    title: str = ""
    failures: list[tuple[str, str]] = field(default_factory=list)
    multi_page: bool = False
    """A sitemap or crawl: the run records each page (sources.SourcePage) and names the source after the site."""
    total_now: Callable[[], int] | None = None
    """For plans that discover units while loading (a crawl): the current estimate, exact once consumed."""
    notes: list[str] = field(default_factory=list)
    """What the maintainer must know although nothing failed (a playlist cut at its limit)."""


def page_document(page: FetchedPage) -> Document:
    return Document(key=page.final_url or page.url, text=page.markdown, title=page.title,
                    link=page.final_url or page.url, content_type=ContentType.MARKDOWN)
