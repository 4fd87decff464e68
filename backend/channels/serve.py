"""Run one answer for an HTTP channel: an error known before the first byte gets its real status, then the
events stream in the channel's wire format, or the finished answer is returned for a JSON reply."""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.http import StreamingHttpResponse

from backend.answering.events import AnswerEvent
from backend.answering.models import Question
from backend.answering.services import AskRequest, answer_stream
from backend.answering.streaming import SSE_HEARTBEAT, AnswerPump, is_error
from backend.channels import encoders
from backend.channels.consumer import ask as ask_in_thread
from backend.channels.encoders import Encoder
from backend.channels.errors import event_error
from backend.core.errors import app_error
from backend.pipeline.llm_types import CancelToken

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# Gurubase's clients check for this type before reading the raw markdown, so both streams carry it.
STREAM_TYPE = "text/event-stream"


def _pump(ask: AskRequest) -> AnswerPump:
    cancel = CancelToken()
    return AnswerPump(lambda: answer_stream(ask, cancel=cancel), cancel)


def _response(pump: AnswerPump, first: AnswerEvent | None, encode: Encoder) -> StreamingHttpResponse:
    if is_error(first):
        raise event_error(first.data)  # nothing was sent yet: a real status (an unknown session is a 404)
    # Heartbeats are SSE comments: only our SSE stream may carry them, never raw markdown.
    heartbeat = SSE_HEARTBEAT if encode is encoders.sse else None
    body: AsyncIterator[bytes] = pump.body(first, encode, heartbeat=heartbeat)
    return StreamingHttpResponse(body, content_type=STREAM_TYPE, headers=SSE_HEADERS)


def _skipped(encode: Encoder) -> Encoder | None:
    """What `first()` passes over: events the stream would not send (raw markdown sends only text)."""
    return None if encode is encoders.sse else encode


async def stream(ask: AskRequest, encode: Encoder) -> StreamingHttpResponse:
    """For async views (guru page, widget)."""
    pump = _pump(ask)
    return _response(pump, await pump.first(_skipped(encode)), encode)


def stream_sync(ask: AskRequest, encode: Encoder) -> StreamingHttpResponse:
    """For sync views (the API), which run in a thread of their own."""
    pump = _pump(ask)
    return _response(pump, pump.first_sync(_skipped(encode)), encode)


def answered(ask: AskRequest) -> Question:
    """The whole answer, then its stored row; an `error` event is raised as the AppError it stands for."""
    answer = ask_in_thread(ask)
    if answer.error is not None:
        raise app_error(answer.error.code, answer.error.msg, error_id=answer.error.error_id)
    return Question.objects.select_related("guru").get(pk=answer.question_id)


def stored_stream(question: Question) -> StreamingHttpResponse:
    """A stored answer sent as a raw-markdown stream (Gurubase's `fetch_existing` with `stream`)."""

    async def body() -> AsyncIterator[bytes]:
        yield question.content.encode()  # async like every stream we send: the server (ASGI) reads it so

    return StreamingHttpResponse(body(), content_type=STREAM_TYPE, headers=SSE_HEADERS)
