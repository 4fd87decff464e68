"""Read paths of the dashboard's sources page: one table page, and live progress of some sources."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils import timezone
from django.utils.timesince import timesince

from backend.dashboard.sources.summary_rows import (
    SUMMARY_ACTIVE,
    SUMMARY_FIELDS,
    SummaryCell,
    SummaryPreview,
    summary_cell,
    summary_entry,
    summary_previews,
)
from backend.gurus.models import Guru
from backend.pipeline.youtube_urls import parse_youtube_url
from backend.sources.models import DataSource, SourceKind, SourcePage, SourceStatus
from backend.sources.selectors import MAX_ID, source_eta_seconds, source_list, source_status_counts

PAGE_SIZE = 50
MAX_PROGRESS_IDS = 200
PAGES_SHOWN = 50
ACTIVE = (SourceStatus.PENDING, SourceStatus.PROCESSING)
# The columns the table and the progress endpoint read; never the encrypted token.
ROW_FIELDS = ("id", "guru_id", "kind", "url", "file", "title", "options", "status", "error_message", "progress_done",
              "progress_total", "chunk_count", "private", "last_indexed_at", "indexing_started_at", "created_at",
              *SUMMARY_FIELDS)
WEBSITE_MODE_LABELS = {"page": "Website page", "sitemap": "Website sitemap", "crawl": "Website crawl"}
STATUS_BADGES: dict[str, str] = {SourceStatus.INDEXED: "ok", SourceStatus.PENDING: "warn",
                                 SourceStatus.PROCESSING: "warn", SourceStatus.FAILED: "error"}


def eta_text(seconds: int | None) -> str:
    """A short human ETA ("~40 s left", "~3 min left", "~1 h 5 min left"); empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"~{max(seconds, 1)} s left"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"~{minutes} min left"
    return f"~{minutes // 60} h {minutes % 60} min left"


def activity_text(source: DataSource, eta: int | None) -> str:
    """What an active run is doing when no ETA can be given yet, else the ETA; empty when idle."""
    if source.status == SourceStatus.PENDING:
        return "queued for a worker"
    if source.status != SourceStatus.PROCESSING:
        return ""
    if source.progress_total <= 0:
        # Sitemaps and playlists are listed before the first page is counted.
        return "finding pages…" if source.kind in (SourceKind.WEBSITE, SourceKind.YOUTUBE) else "starting…"
    return eta_text(eta) or "measuring speed…"


def progress_percent(source: DataSource) -> int:
    """How far the current run is, 0–100; an indexed source is complete even if its run reported no total."""
    if source.status == SourceStatus.INDEXED:
        return 100
    if source.progress_total <= 0:
        return 0
    return min(100, source.progress_done * 100 // source.progress_total)


def kind_label(source: DataSource) -> str:
    """The kind as a maintainer added it: a website's mode, a YouTube link's video or playlist."""
    if source.kind == SourceKind.WEBSITE:
        mode = (source.options or {}).get("mode", "page")
        return WEBSITE_MODE_LABELS.get(mode, source.get_kind_display())
    if source.kind == SourceKind.YOUTUBE:
        try:
            return "YouTube playlist" if parse_youtube_url(source.url).kind == "playlist" else "YouTube video"
        except ValueError:
            return source.get_kind_display()
    return source.get_kind_display()


def last_indexed_text(when: datetime | None, now: datetime) -> str:
    if when is None:
        return "never"
    return "just now" if (now - when).total_seconds() < 60 else f"{timesince(when, now)} ago"


@dataclass(frozen=True)
class PageRow:
    """One page of a multi-page source in the table's expandable list."""

    page: SourcePage
    last_indexed_text: str


@dataclass(frozen=True)
class SourceRow:
    """One table row: the source and the values derived for showing it (so the template stays logic-free)."""

    source: DataSource
    kind_label: str
    is_active: bool
    percent: int
    eta_seconds: int | None
    eta_text: str
    badge: str
    last_indexed_text: str
    pages: tuple[PageRow, ...] = ()
    """A sitemap's or crawl's first PAGES_SHOWN pages (the expandable list of the row)."""
    page_count: int = 0
    summary: SummaryCell | None = None
    """Its summarising state and summary preview, beside the indexing state."""


def source_row(source: DataSource, now: datetime, pages: tuple[PageRow, ...] = (), page_count: int = 0,
               preview: SummaryPreview | None = None) -> SourceRow:
    eta = source_eta_seconds(source=source, now=now)
    return SourceRow(source=source, kind_label=kind_label(source), is_active=source.status in ACTIVE,
                     percent=progress_percent(source),
                     eta_seconds=eta, eta_text=activity_text(source, eta), badge=STATUS_BADGES.get(source.status, ""),
                     last_indexed_text=last_indexed_text(source.last_indexed_at, now), pages=pages,
                     page_count=page_count, summary=summary_cell(source, preview))


def _pages_of(sources: list[DataSource], now: datetime) -> tuple[dict[int, tuple[PageRow, ...]], dict[int, int]]:
    """The first PAGES_SHOWN page rows and the page count of each source: two queries for the whole table page."""
    ids = [s.pk for s in sources if s.kind == SourceKind.WEBSITE]
    if not ids:
        return {}, {}
    counts = dict(SourcePage.objects.filter(source_id__in=ids).values("source_id").annotate(n=Count("id"))
                  .order_by().values_list("source_id", "n"))
    shown = Window(RowNumber(), partition_by=[F("source_id")], order_by=[F("position"), F("id")])
    rows = SourcePage.objects.filter(source_id__in=[i for i in ids if i in counts]).annotate(rank=shown) \
        .filter(rank__lte=PAGES_SHOWN).order_by("source_id", "position", "id")
    pages: dict[int, list[PageRow]] = {}
    for row in rows:
        pages.setdefault(row.source_id, []).append(PageRow(row, last_indexed_text(row.last_indexed_at, now)))
    return {sid: tuple(found) for sid, found in pages.items()}, counts


def source_rows(*, guru: Guru) -> QuerySet[DataSource]:
    """The guru's sources, newest first, with only the columns the table shows."""
    return source_list(guru=guru).only(*ROW_FIELDS)


def sources_page(*, guru: Guru, number: Any) -> tuple[Page[DataSource], list[SourceRow]]:
    """One page of the table and its rows (a fixed number of queries, however many sources there are)."""
    page = Paginator(source_rows(guru=guru), PAGE_SIZE).get_page(number)
    now = timezone.now()
    sources = list(page.object_list)
    pages, counts = _pages_of(sources, now)
    previews = summary_previews(guru_id=guru.pk, sources=sources)
    return page, [source_row(source, now, pages.get(source.pk, ()), counts.get(source.pk, 0), previews.get(source.pk))
                  for source in sources]


def source_progress_entry(source: DataSource, now: datetime, preview: SummaryPreview | None = None) -> dict[str, Any]:
    """What the page's poller needs to redraw one row."""
    row = source_row(source, now)
    return {
        "id": source.pk, "status": source.status, "status_label": source.get_status_display(),
        "badge": row.badge, "active": row.is_active, "done": source.progress_done, "total": source.progress_total,
        "percent": row.percent, "eta_seconds": row.eta_seconds, "eta_text": row.eta_text,
        "chunk_count": source.chunk_count, "error": source.error_message, "title": str(source),
        "last_indexed": source.last_indexed_at.isoformat() if source.last_indexed_at else None,
        "last_indexed_text": row.last_indexed_text, **summary_entry(summary_cell(source, preview)),
    }


def sources_progress(*, guru: Guru, ids: Iterable[int] | None) -> list[dict[str, Any]]:
    """Progress of the given sources of the guru (others' ids are ignored), or of all its indexing or summarising
    ones."""
    wanted = (Q(status__in=ACTIVE) | Q(summary_state__in=SUMMARY_ACTIVE) if ids is None
              else Q(pk__in=[i for i in ids if 0 < i <= MAX_ID]))
    rows = list(source_rows(guru=guru).filter(wanted)[:MAX_PROGRESS_IDS])
    now = timezone.now()
    previews = summary_previews(guru_id=guru.pk, sources=rows)
    return [source_progress_entry(source, now, previews.get(source.pk)) for source in rows]


def header_counts(*, guru: Guru) -> dict[str, int]:
    """The Sources header's "N in all · N indexed · N indexing · N failed" (the poller redraws it)."""
    counts = source_status_counts(guru=guru)
    return {"total": sum(counts.values()), "indexed": counts[SourceStatus.INDEXED],
            "indexing": counts[SourceStatus.PENDING] + counts[SourceStatus.PROCESSING],
            "failed": counts[SourceStatus.FAILED]}


def source_detail_pages(*, source: DataSource, number: Any) -> tuple[Page[SourcePage], list[PageRow]]:
    """One page of a multi-page source's page rows, in the order its last run found them."""
    page = Paginator(SourcePage.objects.filter(source=source).order_by("position", "id"), 100).get_page(number)
    now = timezone.now()
    return page, [PageRow(row, last_indexed_text(row.last_indexed_at, now)) for row in page.object_list]
