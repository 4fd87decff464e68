"""Dashboard pages of a guru's questions: the searchable list (and its CSV), one question in full (and a note
correcting its answer), the gaps."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from backend.answering.memory import memory_correct
from backend.answering.models import Question
from backend.answering.selectors import thresholds_for
from backend.core.errors import AppError
from backend.core.file_streaming import in_batches
from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.memory.forms import NoteForm, correction_form, correction_origin
from backend.dashboard.places import question_channel
from backend.dashboard.questions.export import FETCH_BATCH, csv_lines
from backend.dashboard.questions.forms import QuestionFilterForm
from backend.dashboard.questions.gaps import DEFAULT_SIMILARITY, gap_report
from backend.dashboard.questions.selectors import (
    question_detail,
    question_memories,
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
    return StreamingHttpResponse(in_batches(csv_lines(guru=guru, filters=filters), FETCH_BATCH),
                                 content_type="text/csv; charset=utf-8",
                                 headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _detail_page(request: HttpRequest, guru: Guru, question: Question, correction: NoteForm, *,
                 status: int = 200) -> HttpResponse:
    _, threshold = thresholds_for(guru)
    references = reference_rows(question)
    return render(request, "dashboard/questions/detail.html", {
        "guru": guru, "question": question, "channel": question_channel(question),
        "trust_level": trust_level(question, threshold),
        "threshold": round(threshold * 100), "references": references,
        "timings": timing_rows(question), "usage": usage_rows(question), "turns": session_turns(question),
        "cache_hit": bool(isinstance(question.timings, dict) and question.timings.get("cache_hit")),
        "cited": [r for r in references if r["cited"]], "also_retrieved": [r for r in references if not r["cited"]],
        "citations": [r["n"] for r in references if isinstance(r["n"], int) and r["cited"]],
        "memories": question_memories(question), "correction_form": correction}, status=status)


@guru_view
@require_GET
def question_detail_view(request: HttpRequest, guru: Guru, question_id: int) -> HttpResponse:
    question = question_detail(guru=guru, question_id=question_id)
    return _detail_page(request, guru, question, correction_form(question))


@guru_view
@require_POST
def question_correct_view(request: AuthenticatedHttpRequest, guru: Guru, question_id: int) -> HttpResponse:
    """A maintainer's note on the answer (approved at once), or the resolution of its 👎."""
    question = question_detail(guru=guru, question_id=question_id)
    form = correction_form(question, request.POST)
    if form.is_valid():
        try:
            memory_correct(question=question, text=form.cleaned_data["text"], author=request.user,
                           origin=correction_origin(question))
        except ValueError as exc:
            form.add_error("text", str(exc))
        except AppError as exc:
            form.add_error(None, exc.detail)
        else:
            messages.success(request, format_html(
                'Saved the note: answers quote it when this question is asked again, in any words. It is listed on '
                'the <a href="{}">Memory</a> tab.',
                reverse("dashboard:memory", args=[guru.slug])))
            response = redirect("dashboard:question-detail", slug=guru.slug, question_id=question.pk)
            response["Location"] += "#dq-memory"
            return response
    return _detail_page(request, guru, question, form, status=400)


@guru_view
@require_GET
def unanswered_view(request: HttpRequest, guru: Guru) -> HttpResponse:
    report = gap_report(guru, similarity=request.GET.get("similarity", DEFAULT_SIMILARITY))
    return render(request, "dashboard/questions/unanswered.html", {"guru": guru, "report": report})
