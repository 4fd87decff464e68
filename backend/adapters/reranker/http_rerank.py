"""Reranker speaking Hugging Face TEI's `POST /rerank` contract; also reads Cohere/Jina-style replies."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx

from backend.adapters.retry import Failure, RetryPolicy, call_with_retries, retry_after_from_headers
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import Passage, RerankResult

# 408 (request timeout) and 425 (too early) are the server asking for a later retry, like 429 and 5xx.
_RETRYABLE_STATUSES = frozenset({408, 425, 429})
_BACKOFF_MAX = 20.0


class _UnusableReply(Exception):
    """A 2xx reply that is not a rerank result; retried like a 5xx (often a proxy's error page)."""


class HttpReranker:
    """Cross-encoder (or any reranker) behind HTTP: TEI `{query, texts}` -> `[{index, score}]`.

    Passages are sent as "title\\n\\ntext" in batches of `max_batch`; scores come back as probabilities
    (`raw_scores: false`). If any score of a request lies outside [0, 1], the server returned logits
    anyway, and every score of that request goes through a sigmoid so the order and scale stay consistent.
    Retries 408/425/429/5xx, timeouts and connection errors with exponential backoff (Retry-After wins);
    any other 4xx raises PermanentServiceError.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str = "",
        api_key: str = "",
        timeout: float = 10.0,
        max_retries: int = 2,
        backoff_base: float = 0.3,
        max_batch: int = 64,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise PermanentServiceError(f"The HTTP reranker needs an http(s) base URL, got {base_url!r}")
        if max_batch < 1 or max_retries < 0 or timeout <= 0 or backoff_base < 0:
            raise ValueError("max_batch >= 1, max_retries >= 0, timeout > 0 and backoff_base >= 0 are required")
        self._base_url = base_url.rstrip("/")
        self._model = model
        self._timeout = timeout
        self._policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=_BACKOFF_MAX)
        self._max_batch = max_batch
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self._base_url, timeout=timeout, headers=headers)

    @property
    def name(self) -> str:
        return f"http:{self._model or httpx.URL(self._base_url).host}"

    def close(self) -> None:
        self._client.close()

    def rerank(
        self,
        query: str,
        passages: Sequence[Passage],
        *,
        query_vector: Sequence[float] | None = None,
        top_k: int | None = None,
    ) -> list[RerankResult]:
        if not passages or (top_k is not None and top_k <= 0):
            return []
        texts = [f"{p.title}\n\n{p.text}" if p.title else p.text for p in passages]
        scored: list[tuple[int, float]] = []
        for start in range(0, len(texts), self._max_batch):
            batch = texts[start : start + self._max_batch]
            scored.extend((start + index, score) for index, score in self._call(query, batch))
        if any(score < 0.0 or score > 1.0 for _, score in scored):
            scored = [(index, _sigmoid(score)) for index, score in scored]
        results = [RerankResult(index=index, score=score) for index, score in scored]
        results.sort(key=lambda result: (-result.score, result.index))
        return results if top_k is None else results[:top_k]

    def _call(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
        """One batch with retries; raises only TransientServiceError or PermanentServiceError."""
        body = {"query": query, "texts": texts, "raw_scores": False, "truncate": True}

        def attempt() -> list[tuple[int, float]]:
            return _parse(self._client.post("/rerank", json=body).raise_for_status(), len(texts))

        return call_with_retries(attempt, policy=self._policy, classify=self._classify, what=f"rerank via {self.name}")

    def _classify(self, exc: Exception) -> Failure | None:
        where = f"The reranker at {self._base_url}"
        if isinstance(exc, httpx.HTTPStatusError):
            return self._status_failure(exc.response)
        if isinstance(exc, httpx.TimeoutException):
            return Failure.of(TransientServiceError(f"{where} did not answer within {self._timeout}s"))
        if isinstance(exc, httpx.RequestError):
            return Failure.of(TransientServiceError(f"{where} cannot be reached: {exc}"))
        if isinstance(exc, _UnusableReply):
            return Failure.of(TransientServiceError(f"{where} sent an unusable reply: {exc}"))
        return None

    def _status_failure(self, response: httpx.Response) -> Failure:
        status, detail = response.status_code, _detail(response)
        where = f"The reranker at {self._base_url}"
        if status in _RETRYABLE_STATUSES or status >= 500:
            error = TransientServiceError(f"{where} is unavailable (HTTP {status}): {detail}")
            return Failure.of(error, retry_after_from_headers(response.headers))
        hints = {
            401: "rejected the API key",
            403: "refused access for this API key",
            404: "has no /rerank endpoint; check the base URL and that the server runs a reranker model",
            413: "found the request too large; lower max_batch",
        }
        hint = hints.get(status, "rejected the request")
        return Failure.of(PermanentServiceError(f"{where} {hint} (HTTP {status}): {detail}"))


def _parse(response: httpx.Response, count: int) -> list[tuple[int, float]]:
    """(index, score) pairs from TEI's list or Cohere/Jina's {"results": [{index, relevance_score}]}."""
    try:
        payload: Any = response.json()
    except ValueError as exc:
        raise _UnusableReply(f"not JSON: {response.text[:200]!r}") from exc
    items, key = (payload.get("results"), "relevance_score") if isinstance(payload, dict) else (payload, "score")
    if not isinstance(items, list):
        raise _UnusableReply(f"expected a list of results, got {str(payload)[:200]!r}")
    pairs: dict[int, float] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get(key) if isinstance(item, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or index in pairs:
            raise _UnusableReply(f"bad or repeated index in {str(item)[:200]!r} (batch of {count})")
        if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
            raise _UnusableReply(f"bad {key} in {str(item)[:200]!r}")
        pairs[index] = float(score)
    return list(pairs.items())


def _detail(response: httpx.Response) -> str:
    """TEI's {"error": ...}, Cohere's {"message": ...}, or the start of the body."""
    try:
        payload = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(payload, dict):
        for key in ("error", "message", "detail"):
            if isinstance(payload.get(key), str):
                return str(payload[key])
    return str(payload)[:300]


def _sigmoid(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1.0 + math.exp(logit))
