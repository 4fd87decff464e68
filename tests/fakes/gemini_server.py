"""A fake Gemini API speaking google-genai's wire format on 127.0.0.1, and the pytest fixtures built on it."""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.embeddings.gemini_embed import GeminiEmbedder
from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.adapters.llm.gemini_chat import GeminiChatModel
from tests.contracts import TEST_BACKOFF_BASE, TEST_MAX_RETRIES, TEST_TIMEOUT, ChatHarness
from tests.fakes.http import FakeRequest, FakeResponder, serve

FAKE_GEMINI_KEY = "fake-gemini-key"
# The SDK sends /v1/... by default and /v1beta/... when GOOGLE_GENAI_API_VERSION=beta.
_PATH = re.compile(r"^/(?:v1|v1beta)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_LIST_PATH = re.compile(r"^/(?:v1|v1beta)/models$")
_CHAT_METHODS = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]
# What models.list offers by default: two chat models and an embedding model (which cannot generateContent).
DEFAULT_LISTED_MODELS: tuple[tuple[str, list[str]], ...] = (
    ("gemini-2.5-flash", _CHAT_METHODS),
    ("gemini-2.5-pro", _CHAT_METHODS),
    ("gemini-embedding-001", ["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"]),
)
# Gemini answers 50 models per page unless asked otherwise, and at most 1000.
_DEFAULT_PAGE_SIZE = 50
_MAX_PAGE_SIZE = 1000
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
    503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
_MAX_EMBED_BATCH = 100
_FULL_EMBED_DIMENSION = 3072
# Gemini returns unit vectors only at 3072 dimensions; smaller ones come back unnormalised, and so do ours.
_EMBED_SCALE = 0.37
# Google's documented stand-ins for a thought signature on a function call the model did not sign; clients send
# them as is or base64-encoded.
_SKIP_SIGNATURES = frozenset({"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"})


def google_error(status: int, message: str | None = None, *, reason: str | None = None) -> dict[str, Any]:
    """The JSON body Google APIs answer an error with."""
    error: dict[str, Any] = {"code": status, "message": message or f"scripted HTTP {status}",
                             "status": _STATUS_NAMES.get(status, "UNKNOWN")}
    if reason is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                             "domain": "googleapis.com",
                             "metadata": {"service": "generativelanguage.googleapis.com"}}]
    return {"error": error}


@dataclass
class StreamRecord:
    """How far one streamed answer got before it ended or the client went away."""

    planned_chunks: int
    sent_chunks: int = 0
    client_gone: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class FakeGeminiServer:
    """Routes google-genai calls: generateContent, streamGenerateContent (SSE), batchEmbedContents, models.list.

    Chat requests replay `script`; a reply with tool_calls answers as Gemini 3 does: functionCall parts with ids
    (none when `call_ids` is False, as Gemini 2.5), the first signed with a new thought signature (kept in
    `signatures`), and a call with non-object arguments as MALFORMED_FUNCTION_CALL. Requests that replay a step
    without its signature or with unmatched function responses get Gemini's 400. Embedding requests replay
    `embed_script` (for error statuses and delays) and return HashingEmbedder vectors at the requested
    dimensionality. models.list pages through `listed` ((id, supportedGenerationMethods or None) pairs), at most
    `max_page_size` a page; a `models_status` other than 200 makes it fail with that status. `list_queries`
    records each list request's query.
    """

    def __init__(self, api_key: str = FAKE_GEMINI_KEY) -> None:
        self.api_key = api_key
        self.url = ""
        self.script = ReplyScript()
        self.embed_script = ReplyScript()
        self.streams: list[StreamRecord] = []
        self.listed: list[tuple[str, list[str] | None]] = [(name, list(methods))
                                                           for name, methods in DEFAULT_LISTED_MODELS]
        self.max_page_size = _MAX_PAGE_SIZE
        self.models_status = 200
        self.list_queries: list[dict[str, list[str]]] = []
        self.call_ids = True
        self.signatures: list[str] = []

    def route(self, request: FakeRequest, respond: FakeResponder) -> None:
        try:
            self._dispatch(request, respond)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (timeout or cancel); there is no one left to answer

    def _dispatch(self, request: FakeRequest, respond: FakeResponder) -> None:
        url = urlsplit(request.path)
        if request.method == "GET" and _LIST_PATH.match(url.path):
            self._list(request, parse_qs(url.query), respond)
            return
        match = _PATH.match(url.path)
        handlers: dict[str, Callable[[str, FakeRequest, FakeResponder], None]] = {
            "generateContent": self._generate,
            "streamGenerateContent": self._stream,
            "batchEmbedContents": self._embed,
        }
        if request.method != "POST" or match is None or match["method"] not in handlers:
            respond.json(google_error(404, f"Method not found: {request.method} {url.path}"), status=404)
            return
        key_error = self._key_error(request.headers.get("x-goog-api-key"))
        if key_error is not None:
            respond.json(key_error, status=key_error["error"]["code"])
            return
        if match["method"] == "streamGenerateContent" and parse_qs(url.query).get("alt") != ["sse"]:
            respond.json(google_error(400, "this fake streams only with alt=sse"), status=400)
            return
        handlers[match["method"]](match["model"], request, respond)

    def _list(self, request: FakeRequest, query: dict[str, list[str]], respond: FakeResponder) -> None:
        """models.list: `pageSize` models from the offset `pageToken` names, and the next page's token."""
        key_error = self._key_error(request.headers.get("x-goog-api-key"))
        if key_error is not None:
            respond.json(key_error, status=key_error["error"]["code"])
            return
        self.list_queries.append(query)
        if self.models_status != 200:
            respond.json(google_error(self.models_status), status=self.models_status)
            return
        token = query.get("pageToken", [""])[0]
        if token and not re.fullmatch(r"offset-\d+", token):
            respond.json(google_error(400, "Invalid page token."), status=400)
            return
        start = int(token.removeprefix("offset-")) if token else 0
        size = min(int(query.get("pageSize", [_DEFAULT_PAGE_SIZE])[0]) or _DEFAULT_PAGE_SIZE, self.max_page_size)
        page = self.listed[start : start + size]
        body: dict[str, Any] = {"models": [_listed_model(name, methods) for name, methods in page]}
        if start + size < len(self.listed):
            body["nextPageToken"] = f"offset-{start + size}"
        respond.json(body)

    def _key_error(self, key: str | None) -> dict[str, Any] | None:
        if not key:
            return google_error(403, "Method doesn't allow unregistered callers (callers without established "
                                     "identity). Please use API Key or other form of API consumer identity to call "
                                     "this API.")
        if key != self.api_key:
            return google_error(400, "API key not valid. Please pass a valid API key.", reason="API_KEY_INVALID")
        return None

    def _chat_reply(self, model: str, request: FakeRequest, respond: FakeResponder, *, stream: bool
                    ) -> ScriptedReply | None:
        """Record the request and take the next reply; None when an error was already answered."""
        body = request.json()
        problem = _tool_turns_problem(body.get("contents") or [], issued=self.signatures)
        if problem is not None:
            respond.json(google_error(400, problem), status=400)
            return None
        generation = body.get("generationConfig") or {}
        reply = self.script.next(RecordedRequest(
            messages=_chat_messages(body), model=model, stream=stream,
            json_schema=generation.get("responseJsonSchema") or generation.get("responseSchema"),
            max_tokens=generation.get("maxOutputTokens"), raw=body,
            tools=[declaration.get("name", "") for tool in body.get("tools") or []
                   for declaration in tool.get("functionDeclarations") or []],
            tool_results=_tool_results(body.get("contents") or []),
        ))
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            respond.json(google_error(reply.status), status=reply.status)
            return None
        return reply

    def _generate(self, model: str, request: FakeRequest, respond: FakeResponder) -> None:
        reply = self._chat_reply(model, request, respond, stream=False)
        if reply is not None:
            chunk = _chunk(reply, model, reply.body_text, final=True)
            respond.json(self._with_calls(chunk, reply) if reply.tool_calls else chunk)

    def _with_calls(self, chunk: dict[str, Any], reply: ScriptedReply) -> dict[str, Any]:
        """The reply's calls as functionCall parts after its text (if any); Gemini signs only the first call."""
        candidate = chunk["candidates"][0]
        malformed = next(((name, args) for name, args in reply.tool_calls if isinstance(args, str)), None)
        if malformed is not None:
            # Gemini's wire has no room for arguments that are not an object: it sends no part at all and quotes
            # the raw call in finishMessage.
            candidate.update(content={"role": "model"}, finishReason="MALFORMED_FUNCTION_CALL",
                             finishMessage=f"Malformed function call: call:{malformed[0]}{malformed[1]}")
            return chunk
        parts = candidate["content"]["parts"] if reply.text else []
        for name, args in reply.tool_calls:
            call: dict[str, Any] = {"name": name, "args": args}
            if self.call_ids:
                call["id"] = secrets.token_urlsafe(6)
            parts.append({"functionCall": call})
        self.signatures.append(base64.b64encode(secrets.token_bytes(48)).decode())
        parts[-len(reply.tool_calls)]["thoughtSignature"] = self.signatures[-1]
        candidate["content"]["parts"] = parts
        return chunk

    def _stream(self, model: str, request: FakeRequest, respond: FakeResponder) -> None:
        reply = self._chat_reply(model, request, respond, stream=True)
        if reply is None:
            return
        pieces = reply.pieces()
        record = StreamRecord(planned_chunks=len(pieces))
        self.streams.append(record)
        respond.start_stream()
        for index, piece in enumerate(pieces):
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            event = f"data: {json.dumps(_chunk(reply, model, piece, final=index == len(pieces) - 1))}\r\n\r\n"
            if not respond.write(event.encode()):
                record.client_gone = True
                break
            record.sent_chunks += 1
        record.done.set()

    def _embed(self, model: str, request: FakeRequest, respond: FakeResponder) -> None:
        body = request.json()
        items: list[dict[str, Any]] = body.get("requests") or []
        reply = self.embed_script.next(RecordedRequest(
            messages=[("user", _text(item.get("content"))) for item in items], model=model, stream=False, raw=body,
        ))
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            respond.json(google_error(reply.status), status=reply.status)
            return
        problem = _embed_problem(model, items)
        if problem is not None:
            respond.json(google_error(400, problem), status=400)
            return
        respond.json({"embeddings": [{"values": _vector(item)} for item in items]})


def _listed_model(name: str, methods: list[str] | None) -> dict[str, Any]:
    """A Model resource as models.list returns it; `methods` None leaves supportedGenerationMethods out."""
    model: dict[str, Any] = {"name": f"models/{name}", "version": "001", "displayName": name,
                             "inputTokenLimit": 1048576, "outputTokenLimit": 65536}
    if methods is not None:
        model["supportedGenerationMethods"] = methods
    return model


def _chat_messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The conversation as (role, text): the system instruction first as "system", "model" mapped to "assistant",
    and each function response as ("tool", its result)."""
    messages: list[tuple[str, str]] = []
    if body.get("systemInstruction"):
        messages.append(("system", _text(body["systemInstruction"])))
    for content in body.get("contents") or []:
        role = content.get("role") or "user"
        results = [part["functionResponse"] for part in content.get("parts") or [] if "functionResponse" in part]
        if results:
            messages += [("tool", _result_text(result)) for result in results]
        else:
            messages.append(("assistant" if role == "model" else role, _text(content)))
    return messages


def _calls(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in content.get("parts") or [] if "functionCall" in part]


def _result_text(result: dict[str, Any]) -> str:
    response = result.get("response") or {}
    return str(response["result"]) if "result" in response else json.dumps(response)


def _tool_results(contents: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(call id, tool name, content) of each function response; one without an id answers the call at its place
    in the step before it (Gemini pairs by order and name), and a call without an id counts as call_<n>."""
    results: list[tuple[str, str, str]] = []
    calls: list[dict[str, Any]] = []
    for content in contents:
        responses = [part["functionResponse"] for part in content.get("parts") or [] if "functionResponse" in part]
        for n, response in enumerate(responses, start=1):
            call = calls[n - 1]["functionCall"] if n <= len(calls) else {}
            call_id = response.get("id") or call.get("id") or f"call_{n}"
            results.append((call_id, response.get("name", ""), _result_text(response)))
        calls = _calls(content)
    return results


def _tool_turns_problem(contents: list[dict[str, Any]], *, issued: list[str]) -> str | None:
    """Gemini's 400 for a step answered by a different number of function responses than it made calls, or (as
    Gemini 3) for a step of the current turn whose first call comes back without the signature it was given."""
    texts = [index for index, content in enumerate(contents)
             if content.get("role", "user") == "user" and any("text" in part for part in content.get("parts") or [])]
    turn_start = texts[-1] if texts else 0
    known = {_signature_bytes(signature) for signature in issued} | {skip.encode() for skip in _SKIP_SIGNATURES}
    for index, content in enumerate(contents):
        calls = _calls(content)
        answer = contents[index + 1] if calls and index + 1 < len(contents) else {}
        responses = [part for part in answer.get("parts") or [] if "functionResponse" in part]
        if responses and len(responses) != len(calls):
            return ("Please ensure that the number of function response parts is equal to the number of function "
                    "call parts of the function call turn.")
        if calls and index > turn_start:
            signature = calls[0].get("thoughtSignature")
            if signature is None:
                return ("Function call is missing a thought_signature in functionCall parts. Additional data, "
                        f"function call `default_api:{calls[0]['functionCall'].get('name')}`, position 1.")
            if signature not in _SKIP_SIGNATURES and _signature_bytes(signature) not in known:
                return "Corrupted thought signature."
    return None


def _signature_bytes(signature: str) -> bytes | None:
    """A thought signature as bytes: Gemini sends standard base64, the SDK echoes it URL-safe."""
    try:
        return base64.urlsafe_b64decode(signature.replace("+", "-").replace("/", "_") + "=" * (-len(signature) % 4))
    except (binascii.Error, ValueError):
        return None


def _text(content: dict[str, Any] | None) -> str:
    return "".join(part.get("text", "") for part in (content or {}).get("parts") or [])


def _chunk(reply: ScriptedReply, model: str, text: str, *, final: bool) -> dict[str, Any]:
    """A GenerateContentResponse; like Gemini, only the final one has a finish reason and the output count."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    usage = {"promptTokenCount": reply.prompt_tokens, "totalTokenCount": reply.prompt_tokens}
    if final:
        candidate["finishReason"] = "STOP"
        usage.update(candidatesTokenCount=reply.completion_tokens,
                     totalTokenCount=reply.prompt_tokens + reply.completion_tokens)
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": "fake-response"}


def _embed_problem(model: str, items: list[dict[str, Any]]) -> str | None:
    """The 400 message Gemini would give for this batch, or None when it is acceptable."""
    if not items or len(items) > _MAX_EMBED_BATCH:
        return f"* BatchEmbedContentsRequest.requests: between 1 and {_MAX_EMBED_BATCH} requests per batch"
    for index, item in enumerate(items):
        if item.get("model") != f"models/{model}":
            return f"* BatchEmbedContentsRequest.requests[{index}].model: must be models/{model}"
        if not _text(item.get("content")):
            return f"* BatchEmbedContentsRequest.requests[{index}].content: contains an empty Part."
        if not 1 <= item.get("outputDimensionality", _FULL_EMBED_DIMENSION) <= _FULL_EMBED_DIMENSION:
            return f"* BatchEmbedContentsRequest.requests[{index}].output_dimensionality: out of range"
    return None


def _vector(item: dict[str, Any]) -> list[float]:
    dimension = item.get("outputDimensionality", _FULL_EMBED_DIMENSION)
    unit = HashingEmbedder(dimension, max_input_tokens=2048).embed_query(_text(item.get("content")))
    return unit if dimension == _FULL_EMBED_DIMENSION else [value * _EMBED_SCALE for value in unit]


@pytest.fixture
def gemini_server() -> Iterator[FakeGeminiServer]:
    """A running fake Gemini API; `.url` is its base URL."""
    server = FakeGeminiServer()
    with serve(server.route) as url:
        server.url = url
        yield server


@pytest.fixture
def gemini_fake(gemini_server: FakeGeminiServer) -> tuple[str, ReplyScript]:
    """(base URL, chat reply script) of a running fake Gemini API."""
    return gemini_server.url, gemini_server.script


@pytest.fixture
def gemini_chat_harness(gemini_server: FakeGeminiServer) -> ChatHarness:
    chat = GeminiChatModel(api_key=FAKE_GEMINI_KEY, base_url=gemini_server.url, timeout=TEST_TIMEOUT,
                           max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE)
    return ChatHarness(chat=chat, script=gemini_server.script, over_http=True)


@pytest.fixture
def gemini_embedder(gemini_server: FakeGeminiServer) -> GeminiEmbedder:
    return GeminiEmbedder(api_key=FAKE_GEMINI_KEY, base_url=gemini_server.url, timeout=TEST_TIMEOUT,
                          max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE)
