"""The load generator for bench/load.py: concurrent SSE answers over loopback, timed per request."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

REQUEST_TIMEOUT = 120.0


@dataclass
class Timing:
    """One streamed request: seconds from send to first byte, first answer token and last byte; or its error."""

    ttfb: float = 0.0
    first_token: float = 0.0
    last_byte: float = 0.0
    error: str = ""


@dataclass
class Run:
    """A batch of requests and what they cost."""

    label: str
    timings: list[Timing] = field(default_factory=list)
    wall: float = 0.0

    @property
    def ok(self) -> list[Timing]:
        return [t for t in self.timings if not t.error]

    @property
    def errors(self) -> list[str]:
        return [t.error for t in self.timings if t.error]

    def pct(self, attr: str, q: float) -> float:
        values = sorted(getattr(t, attr) for t in self.ok)
        if not values:
            return float("nan")
        return values[min(len(values) - 1, int(q * len(values)))]

    def throughput(self) -> float:
        return len(self.ok) / self.wall if self.wall else 0.0

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "sent": len(self.timings), "ok": len(self.ok),
                               "errors": len(self.errors), "answers_per_s": round(self.throughput(), 2)}
        for attr in ("ttfb", "first_token", "last_byte"):
            for q, name in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
                out[f"{attr}_{name}_ms"] = round(self.pct(attr, q) * 1000, 1)
        distinct = sorted(set(self.errors))[:3]
        out["error_kinds"] = distinct
        return out


Request = Callable[[httpx.AsyncClient, int], httpx.Request]


async def _one(client: httpx.AsyncClient, build: Request, n: int, *, token_event: bytes) -> Timing:
    timing, started = Timing(), time.perf_counter()
    try:
        response = await client.send(build(client, n), stream=True)
        try:
            if response.status_code != 200:
                body = (await response.aread())[:200]
                timing.error = f"HTTP {response.status_code}: {body.decode(errors='replace')}"
                return timing
            seen = b""
            async for chunk in response.aiter_raw():
                now = time.perf_counter() - started
                if not timing.ttfb:
                    timing.ttfb = now
                if not timing.first_token and token_event in (seen[-64:] + chunk):
                    timing.first_token = now
                seen = (seen + chunk)[-4096:]  # the end holds the final event
            timing.last_byte = time.perf_counter() - started
            timing.error = _stream_problem(seen, token_event)
        finally:
            await response.aclose()
    except (httpx.HTTPError, OSError) as exc:
        timing.error = f"{type(exc).__name__}: {exc}"[:200]
    return timing


def _stream_problem(tail: bytes, token_event: bytes) -> str:
    """An empty string when the stream ended with its final event; otherwise what was wrong."""
    if b"event: error" in tail:
        start = tail.rfind(b"event: error")
        return "error event: " + tail[start:start + 200].decode(errors="replace")
    if token_event == b"event: delta" and b"event: done" not in tail:
        return "stream ended without a done event"
    if token_event != b"event: delta" and b"[DONE]" not in tail:
        return "stream ended without [DONE]"
    return ""


async def burst(build: Request, count: int, *, token_event: bytes, label: str) -> Run:
    """`count` requests started at once."""
    run = Run(label)
    async with _client() as client:
        started = time.perf_counter()
        run.timings = list(await asyncio.gather(*(_one(client, build, n, token_event=token_event)
                                                  for n in range(count))))
        run.wall = time.perf_counter() - started
    return run


async def open_loop(build: Request, rate: float, duration: float, *, token_event: bytes, label: str,
                    offset: int = 0) -> Run:
    """Arrivals at a fixed rate for `duration` seconds, whether or not earlier answers have finished."""
    run, tasks = Run(label), []
    async with _client() as client:
        started = time.perf_counter()
        for n in range(int(rate * duration)):
            delay = started + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(_one(client, build, offset + n, token_event=token_event)))
        run.timings = list(await asyncio.gather(*tasks))
    # Completions per second between the first and the last completion: the arrival rate while the product
    # keeps up, its capacity once answers queue up faster than they finish.
    done = sorted(n / rate + t.last_byte for n, t in enumerate(run.timings) if not t.error)
    run.wall = (done[-1] - done[0]) * len(done) / max(len(done) - 1, 1) if len(done) > 1 else duration
    return run


def _client() -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=400)
    return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(REQUEST_TIMEOUT, connect=30), trust_env=False)


def llm_request(base: str) -> Request:
    """A streamed chat completion straight to the fake LLM: the baseline."""
    def build(client: httpx.AsyncClient, n: int) -> httpx.Request:
        body = {"model": "paced", "stream": True, "messages": [{"role": "user", "content": f"question {n}"}]}
        return client.build_request("POST", f"{base}/v1/chat/completions", content=json.dumps(body),
                                    headers={"Content-Type": "application/json", "Authorization": "Bearer bench"})
    return build


def answer_request(base: str, slug: str, key: str, questions: list[str]) -> Request:
    """Our SSE answer endpoint with an API key; request n asks questions[n % len]."""
    def build(client: httpx.AsyncClient, n: int) -> httpx.Request:
        body = {"question": questions[n % len(questions)]}
        return client.build_request("POST", f"{base}/api/v1/{slug}/answer/", content=json.dumps(body), headers={
            "Content-Type": "application/json", "Accept": "text/event-stream", "X-API-KEY": key})
    return build
