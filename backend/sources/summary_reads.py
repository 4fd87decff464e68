"""Summaries as the API, MCP and public page show them: neutralised text, covered sources, why one is missing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from backend.gurus.models import Guru
from backend.pipeline.sanitize import neutralise, neutralise_line, safe_link
from backend.sources.models import DataSource, SourceStatus, SummaryState
from backend.sources.summary_selectors import (
    SummaryProgress,
    SummarySpend,
    SummaryView,
    guru_summary,
    source_summaries,
    source_summary,
    summary_progress,
    summary_spend,
)
from backend.sources.summary_vectors import source_address

# Which source state speaks for the guru's tree, most telling first: work under way explains a missing
# summary better than an old failure, and a budget stop better than a failure the next run retries.
_GURU_STATE_ORDER = (SummaryState.RUNNING, SummaryState.QUEUED, SummaryState.OVER_BUDGET, SummaryState.FAILED)
_WHY_MISSING: dict[str, str] = {
    SummaryState.QUEUED: "The summary is queued: it is written after the sources are indexed.",
    SummaryState.RUNNING: "The summary is being written.",
    SummaryState.OVER_BUDGET: "The summary stopped at the guru's summary token budget before reaching its top.",
    SummaryState.FAILED: "Writing the summary failed; it is tried again when the sources are indexed again.",
}
NO_SOURCES = "There are no indexed sources yet: the summary is written after they are indexed."
NOT_INDEXED = "The source is not indexed yet: its summary is written after it is indexed."
NOT_YET = "No summary has been written yet: it is written after the sources are indexed."


@dataclass(frozen=True)
class CoveredSource:
    """A source a summary covers, as a reader may see it: no link when the source is private."""

    id: int
    title: str
    link: str
    """Empty for a private source; a path on this instance for an uploaded file."""


@dataclass(frozen=True)
class SummaryRead:
    """One summary ready to show (or None, with a note saying why), and where its tree's build stands."""

    summary: SummaryView | None
    sources: tuple[CoveredSource, ...]
    spend: SummarySpend
    state: str
    note: str
    progress: SummaryProgress | None = None
    """A source's own summarising progress; None for the guru's summary."""


@dataclass(frozen=True)
class SourceSummaryItem:
    """One source's summary on the guru's summary page."""

    source: CoveredSource
    summary: SummaryView


def source_link(source: DataSource) -> str:
    """Where a reader opens the source (see summary_vectors.source_address); never for a private one."""
    return "" if source.private else safe_link(source_address(source))


def covered_source(source: DataSource) -> CoveredSource:
    title = source.title or source.url or (source.file.name or "").rsplit("/", 1)[-1] or f"Source {source.pk}"
    return CoveredSource(id=source.pk, title=neutralise_line(title), link=source_link(source))


def covered_sources(*, guru: Guru, ids: Iterable[int]) -> tuple[CoveredSource, ...]:
    """The guru's sources among `ids`, in the order given, in one query (a deleted one is left out)."""
    wanted = list(dict.fromkeys(ids))
    by_id = {s.pk: s for s in DataSource.objects.filter(guru=guru, pk__in=wanted)}
    return tuple(covered_source(by_id[i]) for i in wanted if i in by_id)


def _shown(view: SummaryView) -> SummaryView:
    """Model and source text are neutralised before any reader sees it (backend.pipeline.sanitize)."""
    return replace(view, text=neutralise(view.text))


def _guru_state(states: set[str], summary: SummaryView | None, spend: SummarySpend) -> str:
    found = next((s for s in _GURU_STATE_ORDER if s in states), "")
    if found in (SummaryState.RUNNING, SummaryState.QUEUED):
        return str(found)
    complete = summary is not None and not summary.partial
    if found == SummaryState.OVER_BUDGET or (spend.over and not complete):
        return str(SummaryState.OVER_BUDGET)
    return str(SummaryState.DONE) if complete else str(found)


def _note(state: str, summary: SummaryView | None, stored_note: str, *, unindexed: str) -> str:
    """The stored note (the build's own words) first, else a sentence for a missing or partial summary;
    `unindexed` says there is nothing to summarise yet (empty: there is)."""
    if stored_note:
        return stored_note
    if summary is not None:
        return _WHY_MISSING[SummaryState.OVER_BUDGET] if summary.partial else ""
    if state in _WHY_MISSING:
        return _WHY_MISSING[state]
    return unindexed or NOT_YET


def guru_summary_read(guru: Guru) -> SummaryRead:
    """The guru's summary with the sources it covers, its spend, and the state of its tree."""
    found = guru_summary(guru_id=guru.pk)
    summary = _shown(found) if found is not None else None
    spend = summary_spend(guru)
    rows = list(DataSource.objects.filter(guru=guru).values_list("summary_state", "status"))
    states = {state for state, _ in rows}
    has_sources = any(status == SourceStatus.INDEXED for _, status in rows)
    state = _guru_state(states, summary, spend)
    sources = covered_sources(guru=guru, ids=summary.sources) if summary is not None else ()
    return SummaryRead(summary=summary, sources=sources, spend=spend, state=state,
                       note=_note(state, summary, spend.note, unindexed="" if has_sources else NO_SOURCES))


def source_summary_read(source: DataSource) -> SummaryRead:
    """One source's summary, its guru's spend, and the source's own summarising progress."""
    found = source_summary(source_id=source.pk)
    summary = _shown(found) if found is not None else None
    progress = summary_progress(source)
    unindexed = "" if source.status == SourceStatus.INDEXED else NOT_INDEXED
    note = _note(progress.state, summary, progress.note, unindexed=unindexed)
    return SummaryRead(summary=summary, sources=(covered_source(source),), spend=summary_spend(source.guru),
                       state=progress.state, note=note, progress=progress)


def source_summary_items(guru: Guru) -> list[SourceSummaryItem]:
    """Every source of the guru that has a summary, by title, with its summary (for the summary page)."""
    views = source_summaries(guru_id=guru.pk)
    sources = DataSource.objects.filter(guru=guru, pk__in=list(views))
    items = [SourceSummaryItem(source=covered_source(s), summary=_shown(views[s.pk]))
             for s in sources]
    return sorted(items, key=lambda item: (item.source.title.casefold(), item.source.id))
