"""Fake Hugging Face TEI `/rerank` server (word-overlap scores, scripted failures) and its pytest fixtures."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from backend.adapters.reranker.http_rerank import HttpReranker
from tests.contracts import TEST_BACKOFF_BASE, TEST_MAX_RETRIES, TEST_TIMEOUT
from tests.fakes.http import FakeRequest, FakeResponder, serve

ReplyStyle = Literal["tei", "cohere", "logits", "garbage"]
_WORD = re.compile(r"[a-z0-9]+")


def overlap_score(query: str, text: str) -> float:
    """Share of the query's words (3+ letters) found in the text: a stand-in for a cross-encoder's score."""
    query_words = {word for word in _WORD.findall(query.lower()) if len(word) >= 3}
    text_words = set(_WORD.findall(text.lower()))
    return len(query_words & text_words) / len(query_words) if query_words else 0.0


def logit(probability: float) -> float:
    """What a server ignoring raw_scores=false would send instead of `probability` (clamped away from 0/1)."""
    clamped = min(max(probability, 0.01), 0.99)
    return math.log(clamped / (1 - clamped))


@dataclass
class TeiFake:
    """The running server: what it received, what it will fail with next, and how it shapes replies."""

    base_url: str = ""
    requests: list[FakeRequest] = field(default_factory=list)
    style: ReplyStyle = "tei"
    _statuses: deque[int] = field(default_factory=deque)
    _delays: deque[float] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._statuses.clear()
            self._delays.clear()
            self.style = "tei"

    def fail_next(self, *statuses: int) -> None:
        """The next requests get these HTTP statuses (TEI's error body), one each, before normal replies."""
        self._statuses.extend(statuses)

    def delay_next(self, *seconds: float) -> None:
        """The next requests wait this long before answering (to trip the client's timeout)."""
        self._delays.extend(seconds)

    def route(self, request: FakeRequest, respond: FakeResponder) -> None:
        with self._lock:
            self.requests.append(request)
            status = self._statuses.popleft() if self._statuses else None
            delay = self._delays.popleft() if self._delays else 0.0
        time.sleep(delay)
        try:
            if request.method != "POST" or request.path != "/rerank":
                respond.json({"error": f"no route {request.method} {request.path}", "error_type": "NotFound"}, 404)
            elif status is not None:
                respond.json({"error": f"scripted failure {status}", "error_type": "Backend"}, status)
            else:
                respond.json(self._reply(request.json()))
        except (BrokenPipeError, ConnectionResetError):
            return  # the client timed out while a delayed reply was pending, as the test intended

    def _reply(self, body: dict[str, Any]) -> Any:
        scores = [overlap_score(body["query"], text) for text in body["texts"]]
        # TEI returns results best first; clients must use `index`, not the position.
        order = sorted(range(len(scores)), key=lambda index: -scores[index])
        if self.style == "cohere":
            return {"id": "fake", "results": [{"index": i, "relevance_score": scores[i]} for i in order]}
        if self.style == "logits":
            return [{"index": i, "score": logit(scores[i])} for i in order]
        if self.style == "garbage":
            return {"unexpected": True}
        return [{"index": i, "score": scores[i]} for i in order]


@pytest.fixture(scope="session")
def _tei_server() -> Iterator[TeiFake]:
    """One server per run: stopping one takes ~0.5 s (serve_forever's poll interval), too slow per test."""
    fake = TeiFake()
    with serve(fake.route) as base_url:
        fake.base_url = base_url
        yield fake


@pytest.fixture
def tei_fake(_tei_server: TeiFake) -> Iterator[TeiFake]:
    """The shared fake server, with no recorded requests, no scripted failures and TEI-style replies."""
    _tei_server.reset()
    yield _tei_server
    _tei_server.reset()


@pytest.fixture
def tei_reranker(tei_fake: TeiFake) -> Iterator[HttpReranker]:
    reranker = HttpReranker(base_url=tei_fake.base_url, model="fake-reranker", timeout=TEST_TIMEOUT,
                            max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE)
    yield reranker
    reranker.close()
