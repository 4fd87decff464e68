"""POST /api/v1/<guru>/answer/: Gurubase-compatible JSON or markdown stream, or our one-call SSE stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.answering.citations import references_marked
from backend.answering.events import AnswerEvent, EventKind, error_marker
from backend.answering.links import absolute_link, answer_path
from backend.answering.models import AnswerState, Channel, Question
from backend.answering.services import AskRequest, answer_stream
from backend.answering.streaming import AnswerPump, is_error
from backend.api.auth import guru_for
from backend.api.schema import errors
from backend.core.errors import NotFound, app_error
from backend.pipeline.llm_types import CancelToken
from backend.pipeline.understanding import MAX_QUESTION_CHARS, normalise_question

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class StrictCharField(serializers.CharField):
    """A string and only a string: DRF's CharField would turn `42` or `4.2` into text and ask it."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class AnswerInput(serializers.Serializer):
    question = StrictCharField(max_length=MAX_QUESTION_CHARS, trim_whitespace=True)
    stream = serializers.BooleanField(default=False)
    session_id = serializers.UUIDField(required=False, allow_null=True)
    fetch_existing = serializers.BooleanField(default=False)


class ReferenceOutput(serializers.Serializer):
    title = serializers.CharField()
    link = serializers.CharField(allow_blank=True)
    icon = serializers.CharField(allow_blank=True)
    n = serializers.IntegerField(help_text="The number the answer's [n] markers use for this reference.")
    cited = serializers.BooleanField(help_text="Whether the answer's text cites it (false: retrieved only).")


class AnswerOutput(serializers.Serializer):
    """The reference design's answer shape (trust score as a 0–100 integer), plus our question id."""

    question_id = serializers.IntegerField()
    slug = serializers.CharField()
    content = serializers.CharField(allow_blank=True)
    question = serializers.CharField()
    date_updated = serializers.DateTimeField()
    trust_score = serializers.IntegerField()
    references = ReferenceOutput(many=True, help_text="The sources the answer cites, as [1]..[k] in its text.")
    also_retrieved = ReferenceOutput(many=True, help_text="Sources retrieved for the answer but not cited in it.")
    session_id = serializers.CharField(allow_null=True)
    question_url = serializers.URLField(
        help_text="Absolute link to a page showing this answer (anyone given it can open it).")
    out_of_context = serializers.BooleanField()


_ICONS = {"YOUTUBE": "youtube", "PDF": "pdf", "GITHUB_REPO": "github", "WEBSITE": "website"}


def answer_json(question: Question, request: HttpRequest) -> dict[str, Any]:
    return {
        "question_id": question.pk, "slug": question.slug, "content": question.content,
        "question": question.question, "date_updated": question.updated_at,
        "trust_score": round((question.trust_score or 0) * 100),
        **_references(question, request),
        "session_id": str(question.binge_id) if question.binge_id else None,
        "question_url": request.build_absolute_uri(answer_path(question)), "out_of_context": question.out_of_context,
    }


def _references(question: Question, request: HttpRequest) -> dict[str, list[dict[str, Any]]]:
    """Gurubase's `references` holds only what the text cites; what was retrieved besides is apart.
    Links are absolute: API clients show them outside our site."""
    refs = [{"title": r.get("title", ""), "link": absolute_link(request, str(r.get("link", ""))),
             "icon": _ICONS.get(str(r.get("kind")), ""),
             "n": r.get("n") if isinstance(r.get("n"), int) else 0, "cited": bool(r.get("cited"))}
            for r in references_marked(question.content, question.references)]
    return {"references": [r for r in refs if r["cited"]], "also_retrieved": [r for r in refs if not r["cited"]]}


def _markdown(event: AnswerEvent) -> bytes:
    """Gurubase's raw stream: only the answer's text (ids and references come from fetch_existing), and a
    delimited error line if the answer fails once streaming has begun."""
    if event.kind is EventKind.DELTA:
        return str(event.data["text"]).encode()
    if event.kind is EventKind.ERROR:
        return error_marker(event.data).encode()
    return b""


def _raise(event: AnswerEvent) -> None:
    """An `error` event as the AppError it stands for, so the client gets its real status."""
    data = event.data
    raise app_error(data["code"], data["detail"], error_id=data.get("error_id", ""))


def _consume(events: Iterator[AnswerEvent]) -> int:
    """Run the pipeline to the end; the id of the recorded question (errors surface as AppErrors)."""
    question_id = 0
    for event in events:
        if event.kind is EventKind.QUESTION:
            question_id = event.data["question_id"]
        elif event.kind is EventKind.ERROR:
            _raise(event)
    return question_id


class EventStreamRenderer(BaseRenderer):
    """Lets `Accept: text/event-stream` through content negotiation (the stream itself bypasses renderers)."""

    media_type = "text/event-stream"
    format = "sse"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return json.dumps(data, default=str).encode()


class AnswerApi(APIView):
    """Ask the guru a question."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    def handle_exception(self, exc: Exception) -> Response:
        # Errors happen before any stream starts: they are JSON whatever the client accepted.
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response

    @extend_schema(
        request=AnswerInput,
        responses={200: OpenApiResponse(AnswerOutput, description=(
            "JSON answer. With `stream: true` the body is the answer's markdown streamed as text/plain; "
            "with `Accept: text/event-stream` it is our SSE stream (question, status, references, delta, "
            "done, error events).")),
            (200, "text/event-stream"): OpenApiTypes.STR, (200, "text/plain"): OpenApiTypes.STR,
            **errors(400, 401, 403, 404, 429, 503)},
        tags=["answers"],
    )
    def post(self, request: Request, slug: str) -> Response | StreamingHttpResponse:
        guru = guru_for(request, slug)
        data = AnswerInput(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        session_id = str(params["session_id"]) if params.get("session_id") else None
        if params["fetch_existing"]:
            return Response(answer_json(self._existing(guru.pk, params["question"], session_id), request))
        ask = AskRequest(guru=guru, question=params["question"], channel=Channel.API, session_id=session_id,
                         user=request.user)
        cancel = CancelToken()
        sse = "text/event-stream" in request.headers.get("Accept", "")
        if sse or params["stream"]:
            pump = AnswerPump(lambda: answer_stream(ask, cancel=cancel), cancel)
            first = pump.first_sync(None if sse else _markdown)
            if is_error(first):
                _raise(first)  # nothing is sent yet: a real status, in every mode
            if sse:
                return StreamingHttpResponse(pump.body(first), content_type="text/event-stream", headers=SSE_HEADERS)
            return StreamingHttpResponse(pump.body(first, _markdown, heartbeat=None),
                                         content_type="text/plain; charset=utf-8", headers=SSE_HEADERS)
        question_id = _consume(answer_stream(ask, cancel=cancel))
        return Response(answer_json(Question.objects.select_related("guru").get(pk=question_id), request))

    @staticmethod
    def _existing(guru_id: int, question: str, session_id: str | None) -> Question:
        found = Question.objects.select_related("guru").filter(
            guru_id=guru_id, user_question__iexact=normalise_question(question))
        if session_id:
            found = found.filter(binge_id=session_id)
        latest = found.filter(state=AnswerState.COMPLETE).exclude(content="").order_by("-created_at").first()
        if latest is None:
            raise NotFound("No answer to this question yet; ask it first.")
        return latest
