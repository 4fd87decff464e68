"""The Sources table's summary column: each row's summarising state and a one-line preview of its summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import F, Window
from django.db.models.functions import RowNumber, Substr

from backend.sources.models import DataSource, Summarization, SummaryState
from backend.sources.summary_selectors import SummaryView, summary_progress

PREVIEW_CHARS = 160
# Read from the database per row: a preview needs the start of the text, never a whole summary.
_HEAD_CHARS = PREVIEW_CHARS * 2
SUMMARY_ACTIVE = (SummaryState.QUEUED, SummaryState.RUNNING)
SUMMARY_FIELDS = ("summary_state", "summary_done", "summary_total", "summary_note")


@dataclass(frozen=True)
class SummaryPreview:
    """The first line of a source's summary, who wrote it, and whether the tree stopped short of it."""

    line: str
    label: str
    extractive: bool
    partial: bool

    @property
    def lead(self) -> str:
        """The word before the line: an extract is never passed off as a written summary."""
        return ("Extract" if self.extractive else "Summary") + (" (partial)" if self.partial else "")


@dataclass(frozen=True)
class SummaryCell:
    """What a row shows about its summary: the state ("summarising 12/40"), why, and the preview."""

    state_text: str
    note: str
    active: bool
    failed: bool
    preview: SummaryPreview | None


def preview_line(text: str) -> str:
    """The text on one line (blanks collapsed), cut at a word near PREVIEW_CHARS."""
    line = " ".join(text.split())
    if len(line) <= PREVIEW_CHARS:
        return line
    cut = line[:PREVIEW_CHARS].rsplit(" ", 1)[0] or line[:PREVIEW_CHARS]
    return cut.rstrip(" ,;:.") + "…"


def _preview(row: Summarization) -> SummaryPreview:
    partial = not row.is_source_root
    # The label's wording lives with SummaryView; the view is built only to read it.
    label = SummaryView(text="", extractive=row.extractive, model=row.model, level=row.level,
                        updated_at=row.updated_at, source_id=row.source_id, sources=(int(row.source_id or 0),),
                        partial=partial).label
    head = str(getattr(row, "head", ""))  # annotated by summary_previews
    return SummaryPreview(line=preview_line(head), label=label, extractive=row.extractive, partial=partial)


def summary_previews(*, guru_id: int, sources: Iterable[DataSource]) -> dict[int, SummaryPreview]:
    """Each listed source's summary preview, in one query for a whole table page (none when no source was
    ever queued for summarising: a source gets summary rows only after its state is set, and keeps a state).

    The summary is the source's root, else (the tree stopped at the budget) its highest node, as
    `summary_selectors.source_summary` picks it; only the head of its text is read.
    """
    ids = [source.pk for source in sources if source.summary_state]
    if not ids:
        return {}
    top = Window(RowNumber(), partition_by=[F("source_id")],
                 order_by=[F("is_source_root").desc(), F("level").desc(), F("position").asc(), F("id").asc()])
    rows = (Summarization.objects.filter(guru_id=guru_id, source_id__in=ids)
            .annotate(rank=top, head=Substr("text", 1, _HEAD_CHARS)).filter(rank=1)
            .only("id", "source_id", "level", "position", "is_source_root", "extractive", "model", "updated_at"))
    return {int(row.source_id or 0): _preview(row) for row in rows}


def summary_cell(source: DataSource, preview: SummaryPreview | None) -> SummaryCell:
    progress = summary_progress(source)
    return SummaryCell(state_text=progress.text, note=progress.note, active=progress.state in SUMMARY_ACTIVE,
                       failed=progress.state == SummaryState.FAILED, preview=preview)


def summary_entry(cell: SummaryCell) -> dict[str, object]:
    """The summary fields of a row in the progress poller's JSON."""
    preview = cell.preview
    return {
        "summary_text": cell.state_text, "summary_note": cell.note, "summary_active": cell.active,
        "summary_failed": cell.failed, "summary_preview": preview.line if preview else "",
        "summary_label": preview.label if preview else "", "summary_lead": preview.lead if preview else "",
        "summary_partial": bool(preview and preview.partial),
    }
