"""Scripted replies shared by the in-memory chat fake and the wire-protocol fake servers."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import (
    CancelToken,
    Completion,
    Flow,
    JsonCompletion,
    Message,
    Role,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolMessage,
    ToolSpec,
    ToolTurn,
    Usage,
)


@dataclass(frozen=True)
class ScriptedReply:
    """One reply: text (or a JSON object), or an HTTP error status; streamed in `chunks` pieces. With
    `tool_calls` ((tool name, arguments) pairs; arguments a dict, or a string sent as is, e.g. invalid JSON)
    the model calls those tools, in the provider's wire format, beside `text`."""

    text: str = "ok"
    json: dict[str, Any] | None = None
    tool_calls: tuple[tuple[str, dict[str, Any] | str], ...] = ()
    status: int = 200
    prompt_tokens: int = 11
    completion_tokens: int = 7
    chunks: int = 3
    chunk_delay: float = 0.0
    delay: float = 0.0
    # Which requests may take this reply: True streamed ones only, False the others, None (the default) any —
    # except that a JSON reply is never streamed. The pipeline grades while it speculatively streams the
    # answer, so the two requests reach a fake in either order; this keeps each scripted reply on its call.
    stream: bool | None = None

    def fits(self, request: RecordedRequest) -> bool:
        wanted = self.stream if self.stream is not None else (False if self.json is not None else None)
        return wanted is None or wanted == request.stream

    @property
    def body_text(self) -> str:
        return json.dumps(self.json) if self.json is not None else self.text

    def pieces(self) -> list[str]:
        """The body split into at most `chunks` non-empty pieces that join back to it."""
        body = self.body_text
        size = max(1, -(-len(body) // max(1, self.chunks)))
        return [body[i : i + size] for i in range(0, len(body), size)] or [""]


@dataclass
class RecordedRequest:
    """What a provider received, normalised across wire formats."""

    messages: list[tuple[str, str]]
    model: str
    stream: bool
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    """Names of the tools offered with the request."""
    tool_results: list[tuple[str, str, str]] = field(default_factory=list)
    """(call id, tool name, content) of each tool result the request sent back, in order."""


class ReplyScript:
    """A queue of replies; when empty, every request gets the default reply. Thread-safe."""

    def __init__(self, default: ScriptedReply | None = None) -> None:
        self._queue: deque[ScriptedReply] = deque()
        self._default = default or ScriptedReply()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []

    def push(self, *replies: ScriptedReply) -> ReplyScript:
        with self._lock:
            self._queue.extend(replies)
        return self

    def next(self, request: RecordedRequest) -> ScriptedReply:
        """The first queued reply that fits the request (see ScriptedReply.stream), else the default."""
        with self._lock:
            self.requests.append(request)
            for reply in self._queue:
                if reply.fits(request):
                    self._queue.remove(reply)
                    return reply
            return self._default


def _error_for(status: int) -> Exception:
    if status == 429 or status >= 500:
        return TransientServiceError(f"scripted HTTP {status}")
    return PermanentServiceError(f"scripted HTTP {status}")


class ScriptedChatModel:
    """In-memory ChatModel: replays a ReplyScript and records prompts; used by unit tests.

    `models` is what `available_models` lists (by default just this model); a `models_status` other than 200
    makes listing fail the way that HTTP status would.
    """

    def __init__(self, script: ReplyScript | None = None, *, model: str = "scripted-model",
                 models: Sequence[str] | None = None) -> None:
        self.script = script or ReplyScript()
        self._model = model
        self.models: list[str] = list(models) if models is not None else [model]
        self.models_status = 200

    @property
    def model(self) -> str:
        return self._model

    def available_models(self) -> list[str]:
        if self.models_status != 200:
            raise _error_for(self.models_status)
        return list(self.models)

    def _reply(self, messages: Sequence[Message], *, stream: bool, schema: dict[str, Any] | None,
               max_tokens: int) -> ScriptedReply:
        request = RecordedRequest(
            messages=[(m.role.value, m.content) for m in messages], model=self._model, stream=stream,
            json_schema=schema, max_tokens=max_tokens,
        )
        reply = self.script.next(request)
        if reply.status != 200:
            raise _error_for(reply.status)
        return reply

    def _usage(self, reply: ScriptedReply, flow: Flow) -> Usage:
        return Usage(model=self._model, flow=flow, prompt_tokens=reply.prompt_tokens,
                     completion_tokens=reply.completion_tokens)

    def complete(self, messages: Sequence[Message], *, max_tokens: int, flow: Flow) -> Completion:
        reply = self._reply(messages, stream=False, schema=None, max_tokens=max_tokens)
        return Completion(text=reply.body_text, usage=self._usage(reply, flow))

    def complete_json(
        self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str, max_tokens: int, flow: Flow
    ) -> JsonCompletion:
        reply = self._reply(messages, stream=False, schema=schema, max_tokens=max_tokens)
        try:
            data = json.loads(reply.body_text)
        except json.JSONDecodeError as exc:
            raise TransientServiceError(f"model returned invalid JSON: {exc}") from exc
        return JsonCompletion(data=data, usage=self._usage(reply, flow))

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, flow: Flow, cancel: CancelToken | None = None
    ) -> Iterator[StreamEvent]:
        reply = self._reply(messages, stream=True, schema=None, max_tokens=max_tokens)
        for piece in reply.pieces():
            if cancel is not None and cancel.cancelled:
                return
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            yield TextDelta(piece)
        yield self._usage(reply, flow)

    def complete_tools(self, messages: Sequence[ToolMessage], tools: Sequence[ToolSpec], *, max_tokens: int,
                       flow: Flow) -> ToolTurn:
        request = RecordedRequest(
            messages=[(m.role.value, m.content) for m in messages], model=self._model, stream=False,
            max_tokens=max_tokens, tools=[t.name for t in tools],
            tool_results=[(m.call_id, m.name, m.content) for m in messages if m.role is Role.TOOL])
        reply = self.script.next(request)
        if reply.status != 200:
            raise _error_for(reply.status)
        return ToolTurn(text="" if reply.tool_calls else reply.body_text, calls=tool_calls_of(reply),
                        usage=self._usage(reply, flow))


def tool_calls_of(reply: ScriptedReply) -> tuple[ToolCall, ...]:
    """The scripted calls as a provider's adapter would read them: ids call_1…, invalid arguments kept raw."""
    calls = []
    for n, (name, arguments) in enumerate(reply.tool_calls, start=1):
        if isinstance(arguments, dict):
            calls.append(ToolCall(id=f"call_{n}", name=name, arguments=arguments))
        else:
            calls.append(ToolCall(id=f"call_{n}", name=name, arguments={}, invalid=arguments))
    return tuple(calls)
