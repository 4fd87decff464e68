"""The page rows of multi-page website sources: replaced by each index run that goes live."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from backend.pipeline.discovery import normalize_url
from backend.sources.models import PageStatus, SourcePage
from backend.sources.writer import PageRecord


def _normalized(url: str) -> str:
    try:
        return normalize_url(url)
    except ValueError:  # kept as given: such a page can only be covered by the same spelling
        return url


def pages_replace(*, source_id: int, pages: Sequence[PageRecord], when: datetime) -> int:
    """Replace the source's page rows with this run's (call inside the transaction that publishes the run)."""
    rows: dict[str, SourcePage] = {}
    for position, page in enumerate(pages):
        if page.url in rows:  # a redirect can land two listed URLs on one page: it was indexed once
            continue
        failed = bool(page.error)
        rows[page.url] = SourcePage(
            source_id=source_id, url=page.url[:2000], normalized_url=_normalized(page.url)[:2000],
            title=page.title[:500], position=position, status=PageStatus.FAILED if failed else PageStatus.INDEXED,
            error=page.error, chunk_count=page.chunks, content_hash=page.content_hash,
            last_indexed_at=None if failed else when)
    SourcePage.objects.filter(source_id=source_id).delete()
    SourcePage.objects.bulk_create(rows.values(), batch_size=500)
    return len(rows)
