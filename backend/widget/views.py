"""The widget's endpoints: CORS, Gurubase-compatible guru/binge/ask calls, our SSE stream, votes, and widget.js."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt

from backend.answering.feedback import parse_vote
from backend.answering.models import Channel
from backend.answering.selectors import answered_question
from backend.answering.services import AskRequest
from backend.channels import encoders, serve
from backend.channels.errors import error_response
from backend.channels.icons import guru_icon_url
from backend.channels.payloads import widget_answer_json
from backend.channels.request import json_object, optional_text, question_input
from backend.core.errors import AppError
from backend.gurus.examples import guru_example_texts
from backend.gurus.icons import guru_icon_src
from backend.gurus.models import Guru
from backend.gurus.selectors import answerer_kind
from backend.widget.markdown_stream import widget_markdown
from backend.widget.models import WidgetId
from backend.widget.services import (
    WidgetError,
    any_widget_allows,
    check_rate,
    request_origin,
    widget_binge_create,
    widget_for_request,
    widget_vote,
)

PREFLIGHT_HEADERS = {
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept",
    "Access-Control-Max-Age": "600",
}
Handler = Callable[[HttpRequest, WidgetId], Awaitable[HttpResponseBase]]
View = Callable[[HttpRequest], Coroutine[Any, Any, HttpResponseBase]]


def _error(exc: AppError) -> JsonResponse:
    # The one error shape, plus `error`: the field Gurubase's widget shows.
    return error_response(exc, error=exc.detail)


def _allow(response: HttpResponseBase, origin: str) -> HttpResponseBase:
    response["Access-Control-Allow-Origin"] = origin
    # Retry-After is not a CORS-safelisted response header: without this the widget cannot read it.
    response["Access-Control-Expose-Headers"] = "Retry-After"
    return response


def _preflight(origin: str) -> HttpResponse:
    """Preflights carry no Authorization header: accept an origin that any active widget allows."""
    if not any_widget_allows(origin):
        return _error(WidgetError(403, "origin_not_allowed", "No widget is allowed on this origin.", cors=False))
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Origin"] = origin
    for name, value in PREFLIGHT_HEADERS.items():
        response[name] = value
    return response


def widget_endpoint(*methods: str) -> Callable[[Handler], View]:
    """Answer preflights, authenticate the widget and its origin, and put CORS headers on every reply."""

    def decorate(handler: Handler) -> View:
        @csrf_exempt  # cross-site by design; authenticated by the widget id and Origin, never by cookies
        @wraps(handler)
        async def view(request: HttpRequest) -> HttpResponseBase:
            origin = request_origin(request)
            response: HttpResponseBase
            if request.method == "OPTIONS":
                response = await sync_to_async(_preflight)(origin)
            else:
                response = await _handle(request, handler, methods, origin)
            patch_vary_headers(response, ["Origin"])
            return response

        return view

    return decorate


async def _handle(request: HttpRequest, handler: Handler, methods: tuple[str, ...], origin: str) -> HttpResponseBase:
    allowed = False
    try:
        if request.method not in methods:
            raise WidgetError(405, "method_not_allowed", f"Use {' or '.join(methods)}.",
                              {"Allow": ", ".join((*methods, "OPTIONS"))})
        widget = await sync_to_async(widget_for_request)(request)
        allowed = True
        response = await handler(request, widget)
    except AppError as exc:
        response = _error(exc)
        if not getattr(exc, "cors", True):
            return response
        if not allowed:
            allowed = await sync_to_async(any_widget_allows)(origin)
    # No Origin: a same-origin request (the dashboard's preview), which needs no CORS headers.
    return _allow(response, origin) if allowed and origin else response


@widget_endpoint("GET")
async def guru(request: HttpRequest, widget: WidgetId) -> HttpResponse:
    """The guru's visuals and name (for options the embed snippet leaves out), its examples and its answerer."""
    g = widget.guru
    examples, answerer = await sync_to_async(_guru_facts)(g)
    return JsonResponse({"slug": g.slug, "name": g.name, "colors": {"base_color": g.base_color},
                         # Absolute: Gurubase's widget loads it from the host page, where a path would 404.
                         "icon_url": guru_icon_url(request, guru_icon_src(g)), "intro_text": g.intro_text,
                         "domain": g.domain_knowledge, "example_questions": examples, "answerer": answerer,
                         "can_receive_feedback": True})


def _guru_facts(guru: Guru) -> tuple[list[str], str]:
    """The maintainer's approved example questions, and which answerer is active ("llm" or "offline"),
    so the widget says what is true of its answers."""
    return guru_example_texts(guru=guru), answerer_kind()


@widget_endpoint("POST")
async def binge(request: HttpRequest, widget: WidgetId) -> HttpResponse:
    """POST {root_slug} → {id, root_slug}: a conversation that follow-ups continue with `binge_id`."""
    root_slug = optional_text(json_object(request), "root_slug")
    await sync_to_async(check_rate)(widget, request)
    created = await sync_to_async(widget_binge_create)(widget, root_slug)
    return JsonResponse({"id": str(created.pk), "root_slug": root_slug})


@widget_endpoint("POST")
async def ask(request: HttpRequest, widget: WidgetId) -> HttpResponseBase:
    """Gurubase's protocol: stream a new answer's markdown, or (`fetch_existing`) the stored answer as JSON."""
    data = json_object(request)
    params = question_input(data, session=("binge_id",))
    optional_text(data, "parent_slug")  # validated for compatibility; the parent is the binge's latest question
    if params.fetch_existing:
        found = await sync_to_async(answered_question)(widget.guru, params.question, session_id=params.session_id,
                                                       channel=Channel.WIDGET)
        if found is not None:
            return JsonResponse(widget_answer_json(found, request))
    await sync_to_async(check_rate)(widget, request)
    return await serve.stream(_ask(widget, params.question, params.session_id), widget_markdown())


@widget_endpoint("POST")
async def stream(request: HttpRequest, widget: WidgetId) -> HttpResponseBase:
    """POST {question, session_id?} → our SSE stream (question, status, references, delta, done, error)."""
    params = question_input(json_object(request))
    await sync_to_async(check_rate)(widget, request)
    return await serve.stream(_ask(widget, params.question, params.session_id), encoders.sse)


def _ask(widget: WidgetId, question: str, session_id: str | None) -> AskRequest:
    return AskRequest(guru=widget.guru, question=question, channel=Channel.WIDGET, session_id=session_id)


@widget_endpoint("POST")
async def feedback(request: HttpRequest, widget: WidgetId) -> HttpResponse:
    """POST {question_id, session_id, feedback: 1 | -1 | null} → the vote as stored."""
    vote = parse_vote(json_object(request))
    question = await sync_to_async(widget_vote)(widget, request, vote)
    return JsonResponse({"question_id": question.pk, "feedback": question.feedback})


@dataclass(frozen=True)
class _Script:
    stamp: tuple[tuple[str, int, int], ...]
    body: bytes
    etag: str


_script_lock = threading.Lock()
_script_cache: dict[str, _Script] = {}


def _script_paths() -> tuple[Path, ...]:
    """What /widget.js is made of, in order; widget.css becomes a string the widget adopts as its stylesheet."""
    frontend = Path(settings.BASE_DIR) / "frontend"
    shared = frontend / "static" / "js"
    widget = frontend / "widget"
    return (shared / "markdown-inline.js", shared / "markdown.js", shared / "sse.js", shared / "answer-parts.js",
            widget / "widget.css", widget / "widget-panel.js", widget / "widget-turn.js", widget / "widget.js")


def _script_part(path: Path) -> bytes:
    """A file of the bundle as script: JavaScript as it is, CSS as a JSON string literal (inert, ASCII-only)."""
    if path.suffix == ".css":
        css = json.dumps(path.read_text(encoding="utf-8"))
        return f"window.OpenGuruWidgetCss = {css};".encode()
    return path.read_bytes().rstrip()


def _load_script() -> _Script | None:
    """The markdown renderer, sse.js, the shared answer parts, then the widget (styles and script) as one
    script, re-read only when one of the files changes."""
    paths = _script_paths()
    try:
        stats = [(path, path.stat()) for path in paths]
    except FileNotFoundError:
        return None
    stamp = tuple((str(path), stat.st_mtime_ns, stat.st_size) for path, stat in stats)
    with _script_lock:
        cached = _script_cache.get("script")
        if cached is not None and cached.stamp == stamp:
            return cached
        try:
            body = b"\n;\n".join(_script_part(p) for p in paths) + b"\n"
        except FileNotFoundError:
            return None
        script = _Script(stamp, body, f'"{hashlib.sha256(body).hexdigest()[:32]}"')
        _script_cache["script"] = script
        return script


def _etag_matches(header: str, etag: str) -> bool:
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag in tags


def _script_response(request: HttpRequest, loaded: _Script) -> HttpResponse:
    if _etag_matches(request.headers.get("If-None-Match", ""), loaded.etag):
        response = HttpResponse(status=304)
        del response["Content-Type"]
    elif request.method == "HEAD":
        # The headers of GET without the body: not every server strips HEAD bodies.
        response = HttpResponse(b"", content_type="application/javascript; charset=utf-8")
        response["Content-Length"] = str(len(loaded.body))
    else:
        response = HttpResponse(loaded.body, content_type="application/javascript; charset=utf-8")
    response["ETag"] = loaded.etag
    response["Cache-Control"] = "public, max-age=300"
    return response


def script(request: HttpRequest) -> HttpResponse:
    """GET /widget.js: the embeddable script (markdown renderer + sse.js + widget.js), cacheable and public."""
    if request.method == "OPTIONS":
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "GET, HEAD, OPTIONS"
    elif request.method not in ("GET", "HEAD"):
        response = HttpResponse("Use GET.", status=405, content_type="text/plain; charset=utf-8")
        response["Allow"] = "GET, HEAD, OPTIONS"
    elif (loaded := _load_script()) is None:
        response = HttpResponse("The widget script is not installed on this server yet (frontend/widget/widget.js "
                                "is missing).", status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "60"
        response["Cache-Control"] = "no-store"
    else:
        response = _script_response(request, loaded)
    response["Access-Control-Allow-Origin"] = "*"
    return response
