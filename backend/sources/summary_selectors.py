"""Reads of the summary trees for the dashboard, the API and MCP: a source's summary, the guru's, the spend."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.sources.models import DataSource, Summarization, SummaryState

EXTRACT_LABEL = "Extract (sentences picked from the sources, no language model)"


@dataclass(frozen=True)
class SummaryView:
    """One summary as shown: its text, who wrote it, and what it covers."""

    text: str
    extractive: bool
    model: str
    level: int
    updated_at: datetime
    source_id: int | None
    """The source it summarises; None for the guru's summary of several sources."""
    sources: tuple[int, ...]
    """The sources it covers."""
    partial: bool = False
    """The tree stopped before its top (budget): this is the highest summary reached, not the whole."""

    @property
    def label(self) -> str:
        return EXTRACT_LABEL if self.extractive else f"Summary by {self.model}" if self.model else "Summary"


@dataclass(frozen=True)
class SummaryProgress:
    """A source's summarising state for its row: "summarising 12/40", done, stopped at the budget…"""

    state: str
    done: int
    total: int
    note: str

    @property
    def text(self) -> str:
        if self.state == SummaryState.RUNNING and self.total:
            return f"summarising {self.done}/{self.total}"
        if self.state == SummaryState.QUEUED:
            return "summary queued"
        if self.state == SummaryState.OVER_BUDGET:
            return "summary stopped at the token budget"
        if self.state == SummaryState.FAILED:
            return "summary failed"
        return "summarising" if self.state == SummaryState.RUNNING else ""


@dataclass(frozen=True)
class SummarySpend:
    """Tokens the guru's summaries have spent against its budget."""

    used: int
    budget: int
    own_budget: bool
    note: str

    @property
    def over(self) -> bool:
        return self.used >= self.budget


def _view(node: Summarization, sources: tuple[int, ...], *, partial: bool = False) -> SummaryView:
    return SummaryView(text=node.text, extractive=node.extractive, model=node.model, level=node.level,
                       updated_at=node.updated_at, source_id=node.source_id if len(sources) == 1 else None,
                       sources=sources, partial=partial)


def _top(rows: list[Summarization]) -> tuple[Summarization | None, bool]:
    """The source's summary, else (a tree stopped at the budget) its highest node, flagged partial."""
    root = next((r for r in rows if r.is_source_root), None)
    if root is not None:
        return root, False
    ranked = sorted(rows, key=lambda r: (-r.level, r.position))
    return (ranked[0], True) if ranked else (None, False)


def source_summary(*, source_id: int) -> SummaryView | None:
    rows = list(Summarization.objects.filter(source_id=source_id))
    node, partial = _top(rows)
    return _view(node, (source_id,), partial=partial) if node is not None else None


def source_summaries(*, guru_id: int) -> dict[int, SummaryView]:
    """Every source's summary in one query, keyed by source id (for the Sources table)."""
    by_source: dict[int, list[Summarization]] = {}
    for row in Summarization.objects.filter(guru_id=guru_id, source__isnull=False):
        by_source.setdefault(int(row.source_id or 0), []).append(row)
    views: dict[int, SummaryView] = {}
    for source_id, rows in by_source.items():
        node, partial = _top(rows)
        if node is not None:
            views[source_id] = _view(node, (source_id,), partial=partial)
    return views


def guru_summary(*, guru_id: int) -> SummaryView | None:
    """The guru's summary (the top of its tree), with the sources it covers."""
    root = Summarization.objects.filter(guru_id=guru_id, is_root=True).first()
    if root is None:
        return None
    covered = tuple(sorted(Summarization.objects.filter(guru_id=guru_id, is_source_root=True)
                           .values_list("source_id", flat=True)))
    return _view(root, tuple(int(s) for s in covered if s is not None))


def summary_progress(source: DataSource) -> SummaryProgress:
    return SummaryProgress(state=source.summary_state, done=source.summary_done, total=source.summary_total,
                           note=source.summary_note)


def summary_budget(guru: Guru) -> int:
    """The guru's own budget, else the instance default."""
    return guru.summary_token_budget if guru.summary_token_budget is not None else settings_get().summary_token_budget


def summary_spend(guru: Guru) -> SummarySpend:
    return SummarySpend(used=guru.summary_tokens_used, budget=summary_budget(guru),
                        own_budget=guru.summary_token_budget is not None, note=guru.summary_note)
