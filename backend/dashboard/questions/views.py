"""Dashboard pages of a guru's questions: the searchable list (and its CSV), one question in full, the gaps."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from backend.answering.selectors import thresholds_for
from backend.dashboard.access import guru_view
from backend.dashboard.places import question_channel
from backend.dashboard.questions.export import csv_lines
from backend.dashboard.questions.forms import QuestionFilterForm
from backend.dashboard.questions.gaps import DEFAULT_SIMILARITY, gap_report
from backend.dashboard.questions.selectors import (
    question_detail,
    question_page,
    reference_rows,
    session_turns,
    timing_rows,
    trust_level,
    usage_rows,
)
from backend.gurus.models import Guru


@guru_view
@require_GET
def question_list_view(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = QuestionFilterForm(request.GET)
    filters = form.filters()
    _, threshold = thresholds_for(guru)
    page, rows = question_page(guru=guru, filters=filters, page=request.GET.get("page"), threshold=threshold)
    return render(request, "dashboard/questions/list.html", {
        "guru": guru, "form": form, "filtered": bool(filters), "page": page, "rows": rows,
        "threshold": round(threshold * 100), "export_query": urlencode(filters)})


@guru_view
@require_GET
def question_export_view(request: HttpRequest, guru: Guru) -> StreamingHttpResponse:
    """The filtered list as a CSV download (an invalid filter is dropped, as on the page)."""
    filters = QuestionFilterForm(request.GET).filters()
    name = f"{guru.slug}-questions-{timezone.localdate():%Y-%m-%d}.csv"
    return StreamingHttpResponse(csv_lines(guru=guru, filters=filters), content_type="text/csv; charset=utf-8",
                                 headers={"Content-Disposition": f'attachment; filename="{name}"'})


@guru_view
@require_GET
def question_detail_view(request: HttpRequest, guru: Guru, question_id: int) -> HttpResponse:
    question = question_detail(guru=guru, question_id=question_id)
    _, threshold = thresholds_for(guru)
    references = reference_rows(question)
    return render(request, "dashboard/questions/detail.html", {
        "guru": guru, "question": question, "channel": question_channel(question),
        "trust_level": trust_level(question, threshold),
        "threshold": round(threshold * 100), "references": references,
        "timings": timing_rows(question), "usage": usage_rows(question), "turns": session_turns(question),
        "cache_hit": bool(isinstance(question.timings, dict) and question.timings.get("cache_hit")),
        "cited": [r for r in references if r["cited"]], "also_retrieved": [r for r in references if not r["cited"]],
        "citations": [r["n"] for r in references if isinstance(r["n"], int) and r["cited"]]})


@guru_view
@require_GET
def unanswered_view(request: HttpRequest, guru: Guru) -> HttpResponse:
    report = gap_report(guru, similarity=request.GET.get("similarity", DEFAULT_SIMILARITY))
    return render(request, "dashboard/questions/unanswered.html", {"guru": guru, "report": report})
