"""The guru's public page, its streaming ask endpoint (SSE) and its thumbs up/down endpoint."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from backend.answering.feedback import feedback_set, parse_feedback, session_question
from backend.answering.links import replay_events, shared_question
from backend.answering.models import Channel
from backend.answering.services import AskRequest, answer_stream
from backend.answering.streaming import AnswerPump, is_error
from backend.answering.validation import clean_question
from backend.core.errors import InvalidQuestion, NotFound, status_for
from backend.core.ratelimit import client_ip, hit
from backend.gurus.examples import guru_example_texts
from backend.gurus.icons import guru_icon_src
from backend.gurus.models import Guru
from backend.pipeline.llm_types import CancelToken
from backend.sources.models import DataSource

MAX_BODY_BYTES = 16 * 1024
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _visible_guru(request: HttpRequest, slug: str) -> Guru:
    guru = get_object_or_404(Guru, slug=slug, active=True)
    user = request.user
    if guru.private and not (user.is_authenticated
                             and (user.is_superuser or guru.maintainers.filter(pk=user.pk).exists())):
        raise PermissionDenied("This guru is private.")
    return guru


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
    return FileResponse(source.file.open("rb"), content_type="application/pdf", filename=name)


def _error(code: str, detail: str, status: int, error_id: str = "", **headers: str) -> JsonResponse:
    body = {"code": code, "detail": detail, **({"error_id": error_id} if error_id else {})}
    response = JsonResponse(body, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def _json_object(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    """The request's JSON object body, or the error response to send instead."""
    if len(request.body) > MAX_BODY_BYTES:
        return _error("too_large", "The request body is too large.", 413)
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:  # not JSON, or not UTF-8 text at all
        return _error("invalid_json", "The body must be JSON.", 400)
    if not isinstance(data, dict):
        return _error("invalid_json", "The body must be a JSON object.", 400)
    return data


def _parse(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    data = _json_object(request)
    if isinstance(data, JsonResponse):
        return data
    try:
        question = clean_question(data.get("question"))
    except InvalidQuestion as exc:
        return _error(exc.code, exc.detail, exc.status)
    session_id = data.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        return _error("invalid_session", "`session_id` must be a string.", 400)
    return {"question": question, "session_id": session_id or None}


async def guru_ask(request: HttpRequest, slug: str) -> HttpResponseBase:
    """POST {question, session_id?} → text/event-stream of question, status, references, delta, done."""
    if request.method != "POST":
        return _error("method_not_allowed", "Use POST.", 405)
    user = await request.auser()
    request.user = user
    guru = await sync_to_async(_visible_guru)(request, slug)
    parsed = _parse(request)
    if isinstance(parsed, JsonResponse):
        return parsed
    decision = await sync_to_async(hit)(f"web:{client_ip(request)}", limit=settings.OPENGURU_WEB_RATE_LIMIT)
    if not decision.allowed:
        return _error("rate_limited", "Too many questions; please wait a moment.", 429,
                      **{"Retry-After": str(decision.retry_after)})
    ask = AskRequest(guru=guru, question=parsed["question"], channel=Channel.WEB,
                     session_id=parsed["session_id"], user=user)
    cancel = CancelToken()
    pump = AnswerPump(lambda: answer_stream(ask, cancel=cancel), cancel)
    first = await pump.first()
    if is_error(first):
        # Nothing was sent yet: the error gets its real status (an unknown session is a 404).
        code = first.data["code"]
        return _error(code, first.data["detail"], status_for(code), first.data.get("error_id", ""))
    return StreamingHttpResponse(pump.body(first), content_type="text/event-stream", headers=SSE_HEADERS)


def _parse_feedback(request: HttpRequest) -> tuple[int, str, int | None] | JsonResponse:
    data = _json_object(request)
    if isinstance(data, JsonResponse):
        return data
    question_id, session_id = data.get("question_id"), data.get("session_id")
    if not isinstance(question_id, int) or isinstance(question_id, bool) or question_id < 1:
        return _error("invalid_question", "Send the answer's `question_id`.", 400)
    if not isinstance(session_id, str) or len(session_id) > 64:
        return _error("invalid_session", "Send the conversation's `session_id`.", 400)
    try:
        value = parse_feedback(data.get("feedback"))
    except ValueError as exc:
        return _error("invalid_feedback", str(exc), 400)
    return question_id, session_id, value


@require_POST
def guru_feedback(request: HttpRequest, slug: str) -> JsonResponse:
    """POST {question_id, session_id, feedback: 1 | -1 | null} → the vote as stored."""
    guru = _visible_guru(request, slug)
    parsed = _parse_feedback(request)
    if isinstance(parsed, JsonResponse):
        return parsed
    limit = settings.OPENGURU_FEEDBACK_RATE_LIMIT
    decision = hit(f"feedback:{client_ip(request)}", limit=limit)
    if not decision.allowed:
        return _error("rate_limited", "Too many votes; please wait a moment.", 429,
                      **{"Retry-After": str(decision.retry_after)})
    question_id, session_id, value = parsed
    try:
        question = session_question(guru=guru, question_id=question_id, session_id=session_id)
    except NotFound as exc:
        return _error(exc.code, exc.detail, 404)
    feedback_set(question=question, value=value)
    return JsonResponse({"question_id": question.pk, "feedback": value})
