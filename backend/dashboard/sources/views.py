"""Dashboard pages for a guru's data sources: add each kind, the status table, live progress, bulk actions."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_GET, require_POST

from backend.core.errors import AppError, NotFound
from backend.core.file_streaming import streamed_file
from backend.dashboard.access import guru_view
from backend.dashboard.sources.chunks import source_chunks_listing
from backend.dashboard.sources.connections import MAX_EDGES, source_connections
from backend.dashboard.sources.forms import (
    GithubForm,
    PdfUploadForm,
    SelectionForm,
    SourceForm,
    WebsiteForm,
    YouTubeForm,
)
from backend.dashboard.sources.selectors import (
    MAX_PROGRESS_IDS,
    header_counts,
    kind_label,
    last_indexed_text,
    source_detail_pages,
    sources_page,
    sources_progress,
)
from backend.dashboard.sources.services import source_rename, sources_add_pdfs, sources_delete, sources_reindex
from backend.gurus.models import Guru
from backend.sources.models import DataSource
from backend.sources.selectors import source_get, source_pick, source_status_counts
from backend.sources.services import source_create, source_reindex_guru
from backend.sources.summary_selectors import source_summary, summary_progress
from backend.sources.validation import overlap_warning

# url kind -> (form, field prefix); prefixes keep the four forms' ids apart on one page.
ADD_FORMS: dict[str, tuple[type[SourceForm], str]] = {
    "youtube": (YouTubeForm, "yt"), "website": (WebsiteForm, "web"), "pdf": (PdfUploadForm, "pdf"),
    "github": (GithubForm, "gh"),
}
ADD_TITLES = {"youtube": "YouTube video or playlist", "website": "Website", "pdf": "PDF files",
              "github": "Git repository"}
NAMES_SHOWN = 5


def _page(request: HttpRequest, guru: Guru, *, bound: tuple[str, SourceForm] | None = None,
          status: int = 200) -> HttpResponse:
    forms = {kind: form_class(prefix=prefix) for kind, (form_class, prefix) in ADD_FORMS.items()}
    if bound is not None:
        forms[bound[0]] = bound[1]
    page, rows = sources_page(guru=guru, number=request.GET.get("page"))
    open_kind = bound[0] if bound else ("" if page.paginator.count else "website")
    adders = [{"kind": kind, "title": ADD_TITLES[kind], "form": form, "open": kind == open_kind}
              for kind, form in forms.items()]
    context = {"guru": guru, "adders": adders, "page": page, "rows": rows, "counts": source_status_counts(guru=guru),
               "pdf_limit": settings.OPENGURU_MAX_PDF_BYTES}
    return render(request, "dashboard/sources/index.html", context, status=status)


def _back(request: HttpRequest, guru: Guru) -> HttpResponse:
    """Back to the table page the action was sent from."""
    url = reverse("dashboard:sources", kwargs={"slug": guru.slug})
    page = _page_number(request)
    return redirect(f"{url}?{urlencode({'page': page})}" if page else url)


def _page_number(request: HttpRequest) -> str:
    page = request.POST.get("page", "")
    return page if page.isdigit() else ""


def _names(names: list[str]) -> str:
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return ", ".join(names[:NAMES_SHOWN]) + more


@guru_view
@require_GET
def sources(request: HttpRequest, guru: Guru) -> HttpResponse:
    return _page(request, guru)


@guru_view
@require_POST
def source_add(request: HttpRequest, guru: Guru, kind: str) -> HttpResponse:
    if kind not in ADD_FORMS:
        raise Http404("Unknown kind of source.")
    form_class, prefix = ADD_FORMS[kind]
    form = form_class(request.POST, request.FILES, prefix=prefix)
    if form.is_valid():
        if isinstance(form, PdfUploadForm):
            return _add_pdfs(request, guru, form)
        try:
            # Staff may add a repository on the server's disk; other maintainers only remote URLs.
            source = source_create(guru=guru, allow_local=request.user.is_staff, **form.source_arguments())
        except AppError as exc:
            form.add_service_error(exc, guru=guru)
        else:
            messages.success(request, f"Added {source}. It is indexed in the background; progress shows below.")
            if warning := overlap_warning(guru=guru, source=source):
                messages.warning(request, warning)
            return redirect("dashboard:sources", slug=guru.slug)
    return _page(request, guru, bound=(kind, form), status=400)


def _add_pdfs(request: HttpRequest, guru: Guru, form: PdfUploadForm) -> HttpResponse:
    report = sources_add_pdfs(guru=guru, files=form.cleaned_data["files"], private=form.cleaned_data["private"])
    if report.created:
        messages.success(request, f"Added {len(report.created)} PDF{'s' if len(report.created) != 1 else ''}: "
                                  f"{_names([str(s) for s in report.created])}.")
    for name, reason in report.failed:
        messages.error(request, f"{name} was not added: {reason}.")
    return redirect("dashboard:sources", slug=guru.slug)


@guru_view
@require_POST
def sources_action(request: HttpRequest, guru: Guru) -> HttpResponse:
    """The table's buttons: per-row re-index/delete, bulk re-index/delete of the ticked rows, re-index all."""
    action = request.POST.get("action", "")
    if action == "reindex_all":
        count = source_reindex_guru(guru=guru)
        messages.success(request, f"Re-indexing all {count} source{'s' if count != 1 else ''}.")
        return _back(request, guru)
    ids = request.POST.getlist("ids")
    for row_action in ("reindex", "delete"):
        if f"row_{row_action}" in request.POST:
            action, ids = row_action, [request.POST[f"row_{row_action}"]]
    form = SelectionForm(MultiValueDict({"ids": ids}))
    if action not in ("reindex", "delete"):
        messages.error(request, "Unknown action.")
    elif not form.is_valid():
        messages.error(request, str(form.errors["ids"][0]))
    elif action == "reindex":
        pick = sources_reindex(guru=guru, ids=form.cleaned_data["ids"])
        if not pick.found:
            messages.error(request, "None of the selected sources exists any more.")
            return _back(request, guru)
        messages.success(request, f"Re-indexing {len(pick.found)} source{'s' if len(pick.found) != 1 else ''}: "
                                  f"{_names([str(s) for s in pick.found])}.")
    else:
        pick = source_pick(guru=guru, ids=form.cleaned_data["ids"])
        if pick.found:
            return render(request, "dashboard/sources/delete.html",
                          {"guru": guru, "sources": pick.found, "page": _page_number(request)})
        messages.error(request, "None of the selected sources exists any more.")
    return _back(request, guru)


@guru_view
@require_POST
def sources_delete_confirmed(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = SelectionForm(request.POST)
    if not form.is_valid():
        messages.error(request, str(form.errors["ids"][0]))
    else:
        names = sources_delete(guru=guru, ids=form.cleaned_data["ids"])
        messages.success(request, f"Deleted {len(names)} source{'s' if len(names) != 1 else ''}: {_names(names)}."
                         if names else "Nothing was deleted.")
    return _back(request, guru)


def _progress_ids(request: HttpRequest) -> list[int] | None:
    """?ids=1&ids=2 or ?ids=1,2; None (every active source) when absent. Raises ValueError on junk."""
    raw = [part for value in request.GET.getlist("ids") for part in value.split(",") if part.strip()]
    if not raw:
        return None
    if len(raw) > MAX_PROGRESS_IDS or not all(part.strip().isdigit() for part in raw):
        raise ValueError(f"ids must be at most {MAX_PROGRESS_IDS} positive integers.")
    return [int(part) for part in raw]


@guru_view
@require_GET
def sources_progress_json(request: HttpRequest, guru: Guru) -> JsonResponse:
    try:
        ids = _progress_ids(request)
    except ValueError as exc:
        return JsonResponse({"code": "invalid", "detail": str(exc)}, status=400)
    entries = sources_progress(guru=guru, ids=ids)
    response = JsonResponse({"sources": entries, "active": sum(1 for entry in entries if entry["active"]),
                             "counts": header_counts(guru=guru)})
    response["Cache-Control"] = "no-store"
    return response


@guru_view
@require_GET
def source_file(request: HttpRequest, guru: Guru, source_id: int) -> FileResponse:
    """A PDF source's file for its maintainers (the public link refuses private sources)."""
    source = _source_or_404(guru, source_id)
    if not source.file:
        raise Http404("This source has no file.")
    name = (source.file.name or "").rsplit("/", 1)[-1]
    return streamed_file(source.file.open("rb"), content_type="application/pdf", filename=name)


def _source_or_404(guru: Guru, source_id: int) -> DataSource:
    try:
        return source_get(guru=guru, source_id=source_id)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


@guru_view
@require_GET
def source_detail(request: HttpRequest, guru: Guru, source_id: int) -> HttpResponse:
    """What one source indexed: its summary, its pages (sitemap/crawl) and its chunks, filtered by text or scored for
    a question."""
    source = _source_or_404(guru, source_id)
    listing = source_chunks_listing(source=source, mode=request.GET.get("mode", "text"), query=request.GET.get("q", ""),
                                    number=request.GET.get("page"))
    pages, page_rows = source_detail_pages(source=source, number=request.GET.get("pages"))
    query = {"mode": listing.mode, "q": listing.query} if listing.query else {}
    context = {"guru": guru, "source": source, "kind_label": kind_label(source), "listing": listing,
               "pages": pages if pages.paginator.count else None, "page_rows": page_rows,
               "query_string": urlencode(query),
               "last_indexed_text": last_indexed_text(source.last_indexed_at, timezone.now()),
               "summary": source_summary(source_id=source.pk), "summary_progress": summary_progress(source),
               "connections": source_connections(source=source), "connections_limit": MAX_EDGES}
    return render(request, "dashboard/sources/detail.html", context)


@guru_view
@require_POST
def source_rename_view(request: HttpRequest, guru: Guru, source_id: int) -> HttpResponse:
    source = _source_or_404(guru, source_id)
    name = source_rename(source=source, title=request.POST.get("title", ""))
    messages.success(request, f"Renamed the source to {name}.")
    return redirect("dashboard:source", slug=guru.slug, source_id=source.pk)
