"""A lightweight OpenAI-compatible chat server for load: answers stream at a fixed token rate.

Run it as its own process (`python -m uvicorn tests.fakes.paced_llm:app`), so its CPU is not the
load generator's and its figures are the baseline a load bench compares against:

- `POST /v1/chat/completions` with `stream: true`: PACED_LLM_TOKENS tokens, the first after
  PACED_LLM_FIRST_MS, then one every 1/PACED_LLM_RATE s, then a usage chunk and `[DONE]`.
- without `stream`: structured replies for our `grades` and `understanding` JSON schemas (every
  context graded 0.9; a follow-up's query is its own text), after PACED_LLM_JSON_MS.
- without `stream` or `response_format` (a summary): PACED_LLM_PLAIN_CHARS characters of text after
  PACED_LLM_JSON_MS, with usage estimated at 4 characters a token, counted (with its service time) in /stats.
- `GET /stats`: streams started, finished and cut short by the client, and the server's own
  time to first token (p50/p95, ms); `POST /stats/reset` clears them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

TOKENS = int(os.environ.get("PACED_LLM_TOKENS", "60"))
RATE = float(os.environ.get("PACED_LLM_RATE", "20"))
FIRST_MS = float(os.environ.get("PACED_LLM_FIRST_MS", "50"))
JSON_MS = float(os.environ.get("PACED_LLM_JSON_MS", "50"))
PLAIN_CHARS = int(os.environ.get("PACED_LLM_PLAIN_CHARS", "1200"))
WORDS = ("The", " answer", " is", " in", " the", " sources", " [1]", ".")
_CONTEXT_ID = re.compile(r"<context id=(\d+)>")


class _Stats:
    """What the server itself saw; the bench reads it as the baseline."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.started = self.finished = self.cut = self.json_calls = 0
        self.first_token_ms: list[float] = []
        self.plain_ms: list[float] = []
        self.plain_tokens = [0, 0]  # prompt, completion
        self.in_flight = self.max_in_flight = 0

    def report(self) -> dict[str, Any]:
        firsts = sorted(self.first_token_ms)
        pick = (lambda q: round(firsts[min(len(firsts) - 1, int(q * len(firsts)))], 1)) if firsts else (lambda q: 0)
        return {"started": self.started, "finished": self.finished, "cut": self.cut, "json_calls": self.json_calls,
                "first_token_p50_ms": pick(0.5), "first_token_p95_ms": pick(0.95),
                "first_token_mean_ms": round(statistics.fmean(firsts), 1) if firsts else 0,
                "plain_calls": len(self.plain_ms), "plain_total_ms": round(sum(self.plain_ms), 1),
                "plain_mean_ms": round(statistics.fmean(self.plain_ms), 2) if self.plain_ms else 0,
                "plain_prompt_tokens": self.plain_tokens[0], "plain_completion_tokens": self.plain_tokens[1],
                "plain_max_in_flight": self.max_in_flight}


STATS = _Stats()


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _json(send: Send, payload: Any, status: int = 200) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _structured(request: dict[str, Any]) -> dict[str, Any]:
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    text = str((request.get("messages") or [{}])[-1].get("content", ""))
    if schema == "grades":
        return {"grades": [{"id": int(i), "score": 0.9} for i in _CONTEXT_ID.findall(text)]}
    question = text.strip().splitlines()[-1][:200] if text.strip() else "question"
    return {"prettified": question, "intent": "question", "answer_length": "medium", "in_scope": True,
            "retrieval_query": question, "reply": ""}


def _completion(model: str, content: str, usage: tuple[int, int] = (100, 20)) -> dict[str, Any]:
    return {"id": "chatcmpl-paced", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def _plain_text(request: dict[str, Any]) -> tuple[str, tuple[int, int]]:
    """A summary-like reply naming a digest of the prompt (replies differ), and usage at 4 characters a token."""
    prompt = "".join(str(m.get("content", "")) for m in request.get("messages") or [])
    tag = f"{zlib.crc32(prompt.encode()):08x}"
    sentence = f"The material {tag} describes components, settings, errors and metrics of the system. "
    text = (sentence * (PLAIN_CHARS // len(sentence) + 1))[:PLAIN_CHARS].rsplit(" ", 1)[0]
    return text, (-(-len(prompt) // 4), -(-len(text) // 4))


async def _plain(send: Send, request: dict[str, Any], model: str, arrived: float) -> None:
    text, usage = _plain_text(request)
    STATS.in_flight += 1
    STATS.max_in_flight = max(STATS.max_in_flight, STATS.in_flight)
    try:
        await asyncio.sleep(JSON_MS / 1000)
        await _json(send, _completion(model, text, usage))
    finally:
        STATS.in_flight -= 1
    STATS.plain_ms.append((time.perf_counter() - arrived) * 1000)
    STATS.plain_tokens[0] += usage[0]
    STATS.plain_tokens[1] += usage[1]


def _frame(model: str, delta: dict[str, Any] | None, *, finish: str | None = None,
           usage: dict[str, int] | None = None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    chunk: dict[str, Any] = {"id": "chatcmpl-paced", "object": "chat.completion.chunk", "created": 0, "model": model,
                             "choices": choices}
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


async def _stream(send: Send, model: str, arrived: float) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
    STATS.started += 1
    await asyncio.sleep(FIRST_MS / 1000)
    try:
        await send({"type": "http.response.body", "body": _frame(model, {"role": "assistant", "content": ""}),
                    "more_body": True})
        for n in range(TOKENS):
            if n:
                await asyncio.sleep(1 / RATE)
            await send({"type": "http.response.body", "body": _frame(model, {"content": WORDS[n % len(WORDS)]}),
                        "more_body": True})
            if n == 0:
                STATS.first_token_ms.append((time.perf_counter() - arrived) * 1000)
        usage = {"prompt_tokens": 400, "completion_tokens": TOKENS, "total_tokens": 400 + TOKENS}
        await send({"type": "http.response.body", "body": _frame(model, {}, finish="stop"), "more_body": True})
        await send({"type": "http.response.body", "body": _frame(model, None, usage=usage) + b"data: [DONE]\n\n"})
        STATS.finished += 1
    except OSError:
        STATS.cut += 1  # the client hung up (uvicorn raises on a write to a closed connection)


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI application."""
    if scope["type"] != "http":
        return
    arrived, path = time.perf_counter(), scope["path"]
    body = await _body(receive)
    if path == "/stats":
        if scope["method"] == "POST":
            STATS.reset()
        await _json(send, STATS.report())
    elif path == "/v1/models":
        await _json(send, {"object": "list", "data": [{"id": "paced", "object": "model", "owned_by": "bench"}]})
    elif path == "/v1/chat/completions":
        request = json.loads(body or b"{}")
        model = str(request.get("model", "paced"))
        if request.get("stream"):
            await _stream(send, model, arrived)
            return
        if not request.get("response_format"):
            await _plain(send, request, model, arrived)
            return
        STATS.json_calls += 1
        await asyncio.sleep(JSON_MS / 1000)
        await _json(send, _completion(model, json.dumps(_structured(request))))
    else:
        await _json(send, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}, 404)
