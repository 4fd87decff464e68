"""Data source read paths for the API and dashboard: one guru's sources, by id or as a list, and ETAs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, QuerySet

from backend.core.errors import NotFound
from backend.gurus.models import Guru
from backend.pipeline.discovery import normalize_url
from backend.sources.models import DataSource, PageStatus, SourceKind, SourcePage, SourceStatus, SummaryState

MAX_ID = 2**63 - 1  # larger ids cannot exist and would overflow the database driver


@dataclass(frozen=True)
class SourcePick:
    """The guru's sources among some ids, and the ids that are not the guru's (or do not exist)."""

    found: list[DataSource]
    missing: list[int]


def source_list(*, guru: Guru) -> QuerySet[DataSource]:
    """The guru's sources, newest first, without the encrypted token column."""
    return DataSource.objects.filter(guru=guru).defer("access_token").order_by("-created_at", "-id")


def source_get(*, guru: Guru, source_id: int) -> DataSource:
    """One source of the guru; another guru's source is as unknown as a missing one."""
    source = DataSource.objects.filter(guru=guru, pk=source_id).first() if 0 < source_id <= MAX_ID else None
    if source is None:
        raise NotFound(f"No data source {source_id} in this guru.")
    return source


def source_pick(*, guru: Guru, ids: Iterable[int]) -> SourcePick:
    """Split ids into the guru's sources and the rest, keeping the order the ids were given in."""
    wanted = list(dict.fromkeys(i for i in ids))
    valid = [i for i in wanted if 0 < i <= MAX_ID]
    by_id = {s.pk: s for s in DataSource.objects.filter(guru=guru, pk__in=valid)}
    return SourcePick(found=[by_id[i] for i in wanted if i in by_id], missing=[i for i in wanted if i not in by_id])


def source_status_counts(*, guru: Guru) -> dict[str, int]:
    """How many of the guru's sources are in each status (every status present, zero if none)."""
    rows = DataSource.objects.filter(guru=guru).values("status").annotate(n=Count("id")).order_by()
    counts = {status.value: 0 for status in SourceStatus}
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def source_totals_by_kind_and_status() -> dict[tuple[str, str], int]:
    """Sources of every guru by (kind, status), every pair present (zero if none): one grouped query."""
    rows = DataSource.objects.values("kind", "status").annotate(n=Count("id")).order_by()
    counts = {(kind.value, status.value): 0 for kind in SourceKind for status in SourceStatus}
    counts.update({(row["kind"], row["status"]): row["n"] for row in rows})
    return counts


def source_eta_seconds(*, source: DataSource, now: datetime) -> int | None:
    """Seconds until the running index run finishes, extrapolated from its pace so far; None if unknown.

    eta = elapsed / done × (total − done). Unknown until the run is claimed and has finished one unit.
    """
    done, total, started = source.progress_done, source.progress_total, source.indexing_started_at
    if source.status != SourceStatus.PROCESSING or started is None or done <= 0 or total <= 0:
        return None
    if done >= total:
        return 0
    elapsed = max((now - started).total_seconds(), 0.0)
    return round(elapsed / done * (total - done))


def source_covering_url(*, guru: Guru, url: str) -> DataSource | None:
    """The guru's multi-page source (sitemap or crawl) whose last run indexed the page at `url`, if any.

    URLs are compared normalised (scheme/host case, default port, dot segments, no fragment), so
    `HTTPS://Example.com:443/a/./b#x` is covered by a sitemap that listed `https://example.com/a/b`.
    """
    try:
        wanted = normalize_url(url)
    except ValueError:
        return None
    page = (SourcePage.objects.filter(source__guru=guru, normalized_url=wanted, status=PageStatus.INDEXED)
            .select_related("source").order_by("source_id").first())
    return page.source if page is not None else None


def term_counts_current(generation: int | None, indexed_at: datetime | None, counted_generation: int | None,
                        counted_at: datetime | None) -> bool:
    """Counts made for the source's live index; a repository syncs in place, so its sync time tells them apart."""
    return counted_generation is not None and counted_generation == generation and counted_at == indexed_at


def guru_unsettled(*, guru: Guru) -> list[str]:
    """What the guru is still building, as sentences: sources being indexed, summaries being written, term counts
    being made. Answers given meanwhile differ from the ones given after (summaries answer broad questions, the
    counts decide what a question names that the guru lacks), so a measurement taken now is not comparable."""
    rows = list(DataSource.objects.filter(guru=guru).values_list(
        "status", "summary_state", "indexed_generation", "last_indexed_at", "term_stats__generation",
        "term_stats__indexed_at"))
    counts = {
        "being indexed": sum(status in (SourceStatus.PENDING, SourceStatus.PROCESSING) for status, *_ in rows),
        "being summarised": sum(state in (SummaryState.QUEUED, SummaryState.RUNNING) for _, state, *_ in rows),
        "having their words counted": sum(row[2] is not None and not term_counts_current(*row[2:]) for row in rows),
    }
    return [f"{n} source{'s' if n != 1 else ''} still {what}" for what, n in counts.items() if n]
