"""POST /api/v1/<guru>/answer/: the API channel — Gurubase-compatible JSON or markdown stream, or our SSE stream."""

from __future__ import annotations

import json
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.answering.models import Channel
from backend.answering.selectors import answered_question
from backend.answering.services import AskRequest
from backend.api.auth import guru_for
from backend.api.schema import errors
from backend.channels import encoders, serve
from backend.channels.payloads import answer_json
from backend.channels.request import SESSION_PATTERN, question_input
from backend.pipeline.understanding import MAX_QUESTION_CHARS


class AnswerInput(serializers.Serializer):
    """The request as documented; it is read by backend.channels.request, like every channel's."""

    question = serializers.CharField(max_length=MAX_QUESTION_CHARS)
    stream = serializers.BooleanField(default=False, allow_null=True,
                                      help_text="Stream the answer's markdown (text/event-stream).")
    session_id = serializers.RegexField(
        SESSION_PATTERN, required=False, allow_null=True, allow_blank=True,
        help_text="Continue this conversation (its UUID); empty or null: a new one.")
    fetch_existing = serializers.BooleanField(default=False, allow_null=True, help_text=(
        "Return the latest stored answer to this question text (in this session when given) instead of a new "
        "one; when there is none, a new answer is made as if it were false."))


class ReferenceOutput(serializers.Serializer):
    title = serializers.CharField()
    link = serializers.CharField(allow_blank=True)
    icon = serializers.CharField(allow_blank=True, help_text="Absolute URL of an icon for the source's kind.")
    kind = serializers.CharField(allow_blank=True, help_text="website, youtube, pdf or github.")
    n = serializers.IntegerField(help_text="The number the answer's [n] markers use for this reference.")
    cited = serializers.BooleanField(help_text="Whether the answer's text cites it (false: retrieved only).")


class AnswerOutput(serializers.Serializer):
    """The reference design's answer shape (trust score as a 0–100 integer), plus our fields."""

    question_id = serializers.IntegerField()
    slug = serializers.CharField()
    content = serializers.CharField(allow_blank=True)
    question = serializers.CharField()
    date_updated = serializers.CharField(help_text='A display date, as Gurubase sends it ("13 May 2025").')
    updated_at = serializers.DateTimeField(help_text="The same moment as an ISO 8601 timestamp.")
    trust_score = serializers.IntegerField()
    references = ReferenceOutput(many=True, help_text="The sources the answer cites, as [1]..[k] in its text.")
    also_retrieved = ReferenceOutput(many=True, help_text="Sources retrieved for the answer but not cited in it.")
    session_id = serializers.CharField(allow_null=True)
    question_url = serializers.URLField(
        help_text="Absolute link to a page showing this answer (anyone given it can open it).")
    out_of_context = serializers.BooleanField()


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
            "JSON answer. With `stream: true` the body is the answer's markdown, streamed as text/event-stream "
            "(raw text, as Gurubase sends it; a failure after the first byte ends it with one "
            "`[OpenGuru error: <code>]` line); with `Accept: text/event-stream` it is our SSE stream "
            "(question, status, references, delta, done, error events).")),
            (200, "text/event-stream"): OpenApiTypes.STR,
            **errors(400, 401, 403, 404, 429, 503)},
        tags=["answers"],
    )
    def post(self, request: Request, slug: str) -> Response | StreamingHttpResponse:
        guru = guru_for(request, slug)
        params = question_input(request.data)
        if params.fetch_existing:
            found = answered_question(guru, params.question, session_id=params.session_id)
            if found is not None:
                return serve.stored_stream(found) if params.stream else Response(answer_json(found, request))
        ask = AskRequest(guru=guru, question=params.question, channel=Channel.API, session_id=params.session_id,
                         user=request.user)
        if "text/event-stream" in request.headers.get("Accept", ""):
            return serve.stream_sync(ask, encoders.sse)
        if params.stream:
            return serve.stream_sync(ask, encoders.markdown)
        return Response(answer_json(serve.answered(ask), request))
