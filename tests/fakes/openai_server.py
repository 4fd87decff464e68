"""A fake OpenAI-compatible server (chat completions, tool calls, SSE streaming, embeddings, model list), fixtures."""

from __future__ import annotations

import base64
import json
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.embeddings.openai_embed import OpenAIEmbedder
from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.adapters.llm.openai_chat import OpenAIChatModel
from tests.contracts import TEST_BACKOFF_BASE, TEST_MAX_RETRIES, TEST_TIMEOUT, ChatHarness
from tests.fakes.http import FakeRequest, FakeResponder, serve

FAKE_OPENAI_KEY = "sk-test-openguru-fake"
FAKE_CHAT_MODEL = "gpt-fake-mini"
FAKE_EMBED_MODEL = "text-embedding-3-small"
FAKE_EMBED_DIMENSION = 384
# Native sizes; `dimensions=` may shorten only the text-embedding-3 family, as on the real API.
EMBEDDING_MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_GONE = (BrokenPipeError, ConnectionResetError)


@dataclass(frozen=True)
class StreamOutcome:
    """How one SSE answer ended: all events written, or the client went away after `events_sent`."""

    events_sent: int
    events_total: int
    client_disconnected: bool


@dataclass
class OpenAIFakeServer:
    """State behind one fake server: scripts to replay, what it accepts, and what it saw.

    GET /v1/models lists `chat_models`; a `models_status` other than 200 makes it fail with that status.
    """

    api_key: str = FAKE_OPENAI_KEY
    chat_models: frozenset[str] = frozenset({FAKE_CHAT_MODEL})
    script: ReplyScript = field(default_factory=ReplyScript)
    embeddings_script: ReplyScript = field(default_factory=ReplyScript)
    retry_after: str | None = None
    models_status: int = 200
    models_listed: int = 0
    cached_prompt_tokens: int = 0
    base_url: str = ""
    stream_outcomes: list[StreamOutcome] = field(default_factory=list)
    # Drop the connection after this many content chunks of a streamed answer (an upstream dying mid-answer).
    cut_stream_after: int | None = None
    refused: list[tuple[int, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api_base(self) -> str:
        """What an SDK takes as base_url (the API lives under /v1, as on api.openai.com)."""
        return f"{self.base_url}/v1"

    def llm_settings(self) -> dict[str, str]:
        """OPENGURU_LLM for the OpenAI provider pointed at this fake, answering as FAKE_CHAT_MODEL."""
        from backend.config.settings.components.models import llm_from_env

        return llm_from_env({"OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": self.api_base,
                             "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL})

    def route(self, request: FakeRequest, responder: FakeResponder) -> None:
        try:
            self._dispatch(request, responder)
        except _GONE:
            return  # the client timed out or hung up while we were answering

    def _dispatch(self, request: FakeRequest, responder: FakeResponder) -> None:
        path = urlsplit(request.path).path
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            shown = request.headers.get("authorization", "").removeprefix("Bearer ")[:6]
            self._refuse(responder, 401, path, f"Incorrect API key provided: {shown}***.")
        elif request.method == "GET" and path == "/v1/models":
            self._models(responder)
        elif request.method != "POST" or path not in ("/v1/chat/completions", "/v1/embeddings"):
            self._refuse(responder, 404, path, f"Invalid URL ({request.method} {path})", code=None)
        elif path == "/v1/chat/completions":
            self._chat(request.json(), responder)
        else:
            self._embeddings(request.json(), responder)

    def _refuse(self, responder: FakeResponder, status: int, path: str, message: str, **overrides: Any) -> None:
        with self._lock:
            self.refused.append((status, path))
        self._error(responder, status, message, **overrides)

    def _error(self, responder: FakeResponder, status: int, message: str, **overrides: Any) -> None:
        kind, code = _ERROR_KINDS.get(status, ("server_error", None))
        error = {"message": message, "type": kind, "param": None, "code": code, **overrides}
        headers = {"Retry-After": self.retry_after} if self.retry_after and status in (429, 503) else {}
        responder.json({"error": error}, status=status, headers=headers)

    def _models(self, responder: FakeResponder) -> None:
        with self._lock:
            self.models_listed += 1
        if self.models_status != 200:
            self._error(responder, self.models_status, f"Scripted failure (HTTP {self.models_status}).")
            return
        data = [{"id": model, "object": "model", "created": 0, "owned_by": "openguru-fake"}
                for model in sorted(self.chat_models)]
        responder.json({"object": "list", "data": data})

    def _chat(self, body: dict[str, Any], responder: FakeResponder) -> None:
        model = str(body.get("model"))
        if model not in self.chat_models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            self._refuse(responder, 404, "/v1/chat/completions", message)
            return
        problem = _tools_problem(body)
        if problem is not None:
            self._refuse(responder, 400, "/v1/chat/completions", problem)
            return
        request = recorded_chat_request(body)
        reply = self.script.next(request)
        time.sleep(reply.delay)
        if reply.status != 200:
            self._error(responder, reply.status, f"Scripted failure (HTTP {reply.status}).")
        elif request.stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(responder, reply, model, include_usage=include_usage)
        else:
            responder.json(self._completion(reply, model))

    def _completion(self, reply: ScriptedReply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.body_text, "refusal": None}
        if reply.tool_calls:
            # Like OpenAI: a turn that calls tools has null content and finishes with "tool_calls".
            message = {**message, "content": None, "tool_calls": _wire_tool_calls(reply)}
        finish_reason = "tool_calls" if reply.tool_calls else "stop"
        return {
            **_envelope(model, "chat.completion"),
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": self._usage(reply),
        }

    def _usage(self, reply: ScriptedReply) -> dict[str, Any]:
        return {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_prompt_tokens},
        }

    def _stream(self, responder: FakeResponder, reply: ScriptedReply, model: str, *, include_usage: bool) -> None:
        """Role chunk, content chunks (paced by chunk_delay), finish chunk, usage chunk, [DONE]; like OpenAI."""
        base = {**_envelope(model, "chat.completion.chunk"), **({"usage": None} if include_usage else {})}
        pieces = reply.pieces()
        events = [_chunk(base, {"role": "assistant", "content": ""}, None)]
        events += [_chunk(base, {"content": piece}, None) for piece in pieces]
        events.append(_chunk(base, {}, "stop"))
        if include_usage:
            events.append({**base, "choices": [], "usage": self._usage(reply)})
        frames = [f"data: {json.dumps(event)}\n\n".encode() for event in events] + [b"data: [DONE]\n\n"]
        responder.start_stream()
        for sent, frame in enumerate(frames):
            if self.cut_stream_after is not None and sent > self.cut_stream_after:
                self._record_stream(StreamOutcome(sent, len(frames), client_disconnected=False))
                return  # Connection: close without a finish chunk or [DONE]
            if 1 <= sent <= len(pieces):
                time.sleep(reply.chunk_delay)
            if not responder.write(frame):
                self._record_stream(StreamOutcome(sent, len(frames), client_disconnected=True))
                return
        self._record_stream(StreamOutcome(len(frames), len(frames), client_disconnected=False))

    def _record_stream(self, outcome: StreamOutcome) -> None:
        with self._lock:
            self.stream_outcomes.append(outcome)

    def _embeddings(self, body: dict[str, Any], responder: FakeResponder) -> None:
        model, inputs = str(body.get("model")), body.get("input")
        texts = [inputs] if isinstance(inputs, str) else inputs
        problem = _embedding_problem(model, texts, body)
        if problem is not None:
            status, message = problem
            self._refuse(responder, status, "/v1/embeddings", message)
            return
        request = RecordedRequest(messages=[("input", text) for text in texts], model=model, stream=False, raw=body)
        reply = self.embeddings_script.next(request)
        time.sleep(reply.delay)
        if reply.status != 200:
            self._error(responder, reply.status, f"Scripted failure (HTTP {reply.status}).")
            return
        embedder = HashingEmbedder(body.get("dimensions") or EMBEDDING_MODELS[model], max_input_tokens=8191)
        encode = _base64_floats if body.get("encoding_format") == "base64" else list
        data = [{"object": "embedding", "index": index, "embedding": encode(vector)}
                for index, vector in enumerate(embedder.embed_documents(texts))]
        tokens = sum(len(text.split()) for text in texts)
        responder.json({"object": "list", "data": data, "model": model,
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def _embedding_problem(model: str, texts: Any, body: dict[str, Any]) -> tuple[int, str] | None:
    """The status and message the real API answers for a bad embeddings request, or None if it is fine."""
    if model not in EMBEDDING_MODELS:
        return 404, f"The model `{model}` does not exist or you do not have access to it."
    if not isinstance(texts, list) or not texts or len(texts) > 2048:
        return 400, "'$.input' is invalid. Please check the API reference."
    if not all(isinstance(text, str) and text for text in texts):
        return 400, "'$.input' is invalid. Please check the API reference."
    if body.get("encoding_format", "float") not in ("float", "base64"):
        return 400, "encoding_format must be 'float' or 'base64'."
    dimensions = body.get("dimensions")
    if dimensions is not None and not model.startswith("text-embedding-3"):
        return 400, "This model does not support specifying dimensions."
    if dimensions is not None and not 1 <= dimensions <= EMBEDDING_MODELS[model]:
        return 400, f"Invalid value for 'dimensions' = {dimensions}."
    return None


def recorded_chat_request(body: dict[str, Any]) -> RecordedRequest:
    """A chat completions body, normalised the way every fake provider records it."""
    response_format = body.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema")
    messages = body.get("messages", [])
    return RecordedRequest(
        messages=[(m["role"], _text(m.get("content"))) for m in messages],
        model=str(body.get("model")),
        stream=bool(body.get("stream")),
        json_schema=schema if response_format.get("type") == "json_schema" else None,
        max_tokens=body.get("max_tokens", body.get("max_completion_tokens")),
        raw=body,
        tools=[tool["function"]["name"] for tool in body.get("tools") or []],
        tool_results=_tool_results(messages),
    )


def _wire_tool_calls(reply: ScriptedReply) -> list[dict[str, Any]]:
    """The scripted calls as OpenAI sends them: ids call_1… and arguments as JSON text (raw strings as given)."""
    return [{"id": f"call_{n}", "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for n, (name, args) in enumerate(reply.tool_calls, start=1)]


def _tool_results(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(call id, tool name, content) of each role "tool" message; the wire message names only the call, so the
    tool's name comes from the latest assistant turn that made a call with that id."""
    names: dict[str, str] = {}
    results = []
    for message in messages:
        if message["role"] == "assistant":
            names.update({call["id"]: call["function"]["name"] for call in message.get("tool_calls") or []})
        elif message["role"] == "tool":
            call_id = message["tool_call_id"]
            results.append((call_id, names.get(call_id, ""), _text(message.get("content"))))
    return results


def _tools_problem(body: dict[str, Any]) -> str | None:
    """The 400 message OpenAI answers for malformed tools or tool turns, or None if they are fine."""
    tools = body.get("tools")
    if tools is not None and not tools:
        return "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array."
    for index, tool in enumerate(tools or []):
        if tool.get("type") != "function" or not (tool.get("function") or {}).get("name"):
            return f"Missing required parameter: 'tools[{index}].function.name'."
    return _tool_turns_problem(body.get("messages", []))


def _tool_turns_problem(messages: list[dict[str, Any]]) -> str | None:
    """Each tool message must answer a call of the assistant turn before it, and every such call needs one."""
    awaited: set[str] = set()  # calls of the last assistant turn that still wait for their result
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if message.get("tool_call_id") not in awaited:
                return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                        f"with 'tool_calls' (messages[{index}]).")
            awaited.discard(message["tool_call_id"])
            continue
        if awaited:
            break
        if message["role"] == "assistant":
            awaited = {call["id"] for call in message.get("tool_calls") or []}
    if awaited:
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {sorted(awaited)}")
    return None


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def _envelope(model: str, kind: str) -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": kind, "created": int(time.time()), "model": model,
            "system_fingerprint": "fp_fake"}


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}


def _base64_floats(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


@pytest.fixture
def openai_server() -> Iterator[OpenAIFakeServer]:
    """A running fake with an empty script; set `retry_after`, `chat_models`, etc. before calling it."""
    fake = OpenAIFakeServer()
    with serve(fake.route) as url:
        fake.base_url = url
        yield fake


@pytest.fixture
def openai_fake(openai_server: OpenAIFakeServer) -> tuple[str, ReplyScript]:
    """(SDK base URL ending in /v1, the chat ReplyScript) for tests that build their own client."""
    return openai_server.api_base, openai_server.script


@pytest.fixture
def openai_chat_harness(openai_server: OpenAIFakeServer) -> ChatHarness:
    chat = OpenAIChatModel(api_key=FAKE_OPENAI_KEY, model=FAKE_CHAT_MODEL, base_url=openai_server.api_base,
                           timeout=TEST_TIMEOUT, max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE)
    return ChatHarness(chat=chat, script=openai_server.script, over_http=True)


@pytest.fixture
def openai_embedder(openai_server: OpenAIFakeServer) -> OpenAIEmbedder:
    return OpenAIEmbedder(api_key=FAKE_OPENAI_KEY, model=FAKE_EMBED_MODEL, dimension=FAKE_EMBED_DIMENSION,
                          base_url=openai_server.api_base, timeout=TEST_TIMEOUT, max_retries=TEST_MAX_RETRIES,
                          backoff_base=TEST_BACKOFF_BASE, batch_size=4)
