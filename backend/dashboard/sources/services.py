"""Write paths of the dashboard's sources pages: add PDFs one by one, re-index or delete a selection, rename."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

from backend.core.errors import AppError, Conflict
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind
from backend.sources.selectors import SourcePick, source_pick
from backend.sources.services import source_create, source_delete, source_schedule_index

# A PDF starts with this marker within its first kilobyte (some writers put junk before it).
PDF_MARKER = b"%PDF-"
PDF_HEADER_WINDOW = 1024


@dataclass
class UploadReport:
    """What became of each uploaded file: the sources created, and (file name, reason) for the rest."""

    created: list[DataSource] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def _looks_like_pdf(upload: UploadedFile) -> bool:
    upload.seek(0)
    head = upload.read(PDF_HEADER_WINDOW)
    upload.seek(0)
    return PDF_MARKER in head


def _pdf_problem(upload: UploadedFile) -> str:
    """Why this upload cannot become a source before it is stored (empty when it can)."""
    limit = settings.OPENGURU_MAX_PDF_BYTES
    if upload.size is None or upload.size > limit:
        return f"larger than the {filesizeformat(limit)} limit for PDFs"
    if upload.size == 0:
        return "the file is empty"
    if not _looks_like_pdf(upload):
        return "not a PDF file"
    return ""


def sources_add_pdfs(*, guru: Guru, files: Iterable[UploadedFile], private: bool) -> UploadReport:
    """One source per file; a file that is too large, not a PDF or already added fails on its own."""
    report = UploadReport()
    for upload in files:
        name = upload.name or "document.pdf"
        problem = _pdf_problem(upload)
        if problem:
            report.failed.append((name, problem))
            continue
        try:
            report.created.append(source_create(guru=guru, kind=SourceKind.PDF, upload=upload, private=private))
        except Conflict:
            report.failed.append((name, "the same PDF was already added to this guru"))
        except AppError as exc:
            report.failed.append((name, exc.detail.rstrip(".")))
    return report


def sources_reindex(*, guru: Guru, ids: Iterable[int]) -> SourcePick:
    """Schedule a new index run for each of the guru's sources among `ids`."""
    pick = source_pick(guru=guru, ids=ids)
    for source in pick.found:
        source_schedule_index(source=source)
    return pick


def sources_delete(*, guru: Guru, ids: Iterable[int]) -> list[str]:
    """Delete the guru's sources among `ids` (vectors and files go after commit); returns their names."""
    names = []
    for source in source_pick(guru=guru, ids=ids).found:
        names.append(str(source))
        source_delete(source=source)
    return names


TITLE_MAX = 500


def source_rename(*, source: DataSource, title: str) -> str:
    """Give the source the maintainer's name (blank: back to the name its next index run gives it)."""
    title = " ".join(title.split())[:TITLE_MAX]
    DataSource.objects.filter(pk=source.pk).update(title=title)
    source.title = title
    return str(source)
