"""The guru's public page, its streaming ask endpoint (SSE) and its thumbs up/down endpoint."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from backend.answering.access import Asker, guru_for_asker
from backend.answering.feedback import parse_vote, vote_record
from backend.answering.links import replay_events, shared_question
from backend.answering.models import Channel
from backend.answering.services import AskRequest
from backend.channels import encoders, serve
from backend.channels.errors import error_response
from backend.channels.request import json_object, question_input
from backend.core.errors import AppError, Forbidden, NotFound, RequestError
from backend.core.file_streaming import streamed_file
from backend.core.ratelimit import client_ip, hit
from backend.gurus.examples import guru_example_texts
from backend.gurus.icons import guru_icon_src
from backend.gurus.models import Guru
from backend.sources.models import DataSource


def _askable(request: HttpRequest, slug: str) -> Guru:
    """The guru if this visitor may ask it (the rule every channel shares); AppError otherwise."""
    return guru_for_asker(slug, Asker(user=request.user))


def _visible_guru(request: HttpRequest, slug: str) -> Guru:
    """`_askable` for the HTML pages, whose refusals are Django's 404 and 403 pages."""
    try:
        return _askable(request, slug)
    except NotFound as exc:
        raise Http404(exc.detail) from exc
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from exc


@require_GET
@ensure_csrf_cookie
def guru_page(request: HttpRequest, slug: str) -> HttpResponse:
    guru = _visible_guru(request, slug)
    # Only what a maintainer published: nothing one visitor typed is shown to another (issue #14).
    examples = guru_example_texts(guru=guru)
    return render(request, "guru/page.html", {**_page_context(guru), "examples": examples})


def _page_context(guru: Guru) -> dict[str, Any]:
    return {"guru": guru, "ask_url": f"/g/{guru.slug}/ask/", "feedback_url": f"/g/{guru.slug}/feedback/",
            "icon_src": guru_icon_src(guru)}


@require_GET
@ensure_csrf_cookie
def shared_answer(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """One stored answer, opened from its share link (the API's `question_url`), above the ask form."""
    guru = _visible_guru(request, slug)
    question = shared_question(guru, token)
    if question is None:
        raise Http404("This answer link is not valid.")
    return render(request, "guru/page.html", {**_page_context(guru), "shared_events": replay_events(question),
                                              "shared_question": question})


@require_GET
def source_file(request: HttpRequest, source_id: int) -> FileResponse:
    """An uploaded source file (PDF citations link here), if its guru is visible and it is not private."""
    source = get_object_or_404(DataSource.objects.select_related("guru"), pk=source_id)
    _visible_guru(request, source.guru.slug)
    if not source.file or source.private:
        raise Http404("This source has no public file.")
    name = (source.file.name or "").rsplit("/", 1)[-1]
    return streamed_file(source.file.open("rb"), content_type="application/pdf", filename=name)


async def guru_ask(request: HttpRequest, slug: str) -> HttpResponseBase:
    """POST {question, session_id?} → text/event-stream of question, status, references, delta, done."""
    try:
        if request.method != "POST":
            raise RequestError(405, "method_not_allowed", "Use POST.", {"Allow": "POST"})
        request.user = await request.auser()
        guru = await sync_to_async(_askable)(request, slug)
        params = question_input(json_object(request))
        decision = await sync_to_async(hit)(f"web:{client_ip(request)}", limit=settings.OPENGURU_WEB_RATE_LIMIT)
        if not decision.allowed:
            raise RequestError(429, "rate_limited", "Too many questions; please wait a moment.",
                               {"Retry-After": str(decision.retry_after)})
        ask = AskRequest(guru=guru, question=params.question, channel=Channel.WEB, session_id=params.session_id,
                         user=request.user)
        return await serve.stream(ask, encoders.sse)
    except AppError as exc:
        return error_response(exc)


@require_POST
def guru_feedback(request: HttpRequest, slug: str) -> JsonResponse:
    """POST {question_id, session_id, feedback: 1 | -1 | null} → the vote as stored."""
    try:
        guru = _askable(request, slug)
        question = vote_record(guru=guru, vote=parse_vote(json_object(request)), client=client_ip(request))
    except AppError as exc:
        return error_response(exc)
    return JsonResponse({"question_id": question.pk, "feedback": question.feedback})
