"""Shared plumbing for OpenAI-SDK adapters: client construction, retries with backoff, error translation."""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import openai

from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError

logger = logging.getLogger(__name__)

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
# 408/409 are what OpenAI itself answers for request and lock timeouts; both succeed on a later try.
_RETRYABLE_STATUSES = frozenset({408, 409, 429})

T = TypeVar("T")


class UnusableResponseError(Exception):
    """A 200 reply the adapter cannot use (invalid JSON, missing keys); retried like a 5xx."""


@dataclass(frozen=True)
class Endpoint:
    """Where calls go and for which model; used to write actionable error messages."""

    base_url: str
    model: str

    @property
    def is_official(self) -> bool:
        return self.base_url.rstrip("/") == OFFICIAL_BASE_URL

    @property
    def service(self) -> str:
        return "OpenAI" if self.is_official else f"The OpenAI-compatible API at {self.base_url}"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait; Retry-After wins over the exponential schedule but is capped too."""

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        # Jitter spreads out workers that all hit the same rate limit at once.
        return ceiling * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class _Failure:
    error: ServiceError
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return isinstance(self.error, TransientServiceError)


def resolve_base_url(base_url: str | None) -> str:
    """An explicit URL, so the SDK never falls back to reading OPENAI_BASE_URL from the environment itself."""
    return (base_url or OFFICIAL_BASE_URL).rstrip("/")


def make_client(*, api_key: str, endpoint: Endpoint, timeout: float) -> openai.OpenAI:
    """An SDK client with its own retries off: `call_with_retries` owns the retry policy."""
    if not api_key and endpoint.is_official:
        raise PermanentServiceError("No OpenAI API key is configured (set OPENAI_API_KEY).")
    # Local servers (Ollama, LM Studio) need no key, but the SDK refuses to start without one.
    key = api_key or "no-key-needed"
    try:
        return openai.OpenAI(api_key=key, base_url=endpoint.base_url, timeout=timeout, max_retries=0)
    except openai.OpenAIError as exc:
        raise PermanentServiceError(f"Cannot configure the OpenAI client for {endpoint.base_url}: {exc}") from exc


def call_with_retries(
    operation: Callable[[], T],
    *,
    policy: RetryPolicy,
    endpoint: Endpoint,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `operation`, retrying transient failures; raises only TransientServiceError or PermanentServiceError."""
    for attempt in range(policy.max_retries + 1):
        try:
            return operation()
        except (openai.OpenAIError, UnusableResponseError) as exc:
            failure = _classify(exc, endpoint)
            if not failure.retryable or attempt == policy.max_retries:
                raise failure.error from exc
        wait = policy.delay(attempt, failure.retry_after)
        logger.info("%s for %s failed (%s); retry %d/%d in %.2fs", what, endpoint.model, failure.error,
                    attempt + 1, policy.max_retries, wait)
        sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def translate_error(exc: openai.OpenAIError | UnusableResponseError, endpoint: Endpoint) -> ServiceError:
    """The project error for an SDK exception (used where retrying is impossible, e.g. mid-stream)."""
    return _classify(exc, endpoint).error


def _classify(exc: openai.OpenAIError | UnusableResponseError, endpoint: Endpoint) -> _Failure:
    if isinstance(exc, UnusableResponseError):
        return _Failure(TransientServiceError(f"{endpoint.service} returned an unusable reply: {exc}"))
    if isinstance(exc, openai.APITimeoutError):
        return _Failure(TransientServiceError(f"{endpoint.service} did not answer in time"))
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return _Failure(TransientServiceError(f"Cannot reach {endpoint.base_url}: {cause}"))
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc, endpoint)
    return _Failure(TransientServiceError(f"{endpoint.service} failed: {exc}"))


def _classify_status(exc: openai.APIStatusError, endpoint: Endpoint) -> _Failure:
    status, detail, code = exc.status_code, _detail(exc), exc.code
    suffix = f"(HTTP {status}): {detail}"
    if status == 401:
        return _Failure(PermanentServiceError(f"{endpoint.service} rejected the API key {suffix}"))
    if status == 403:
        return _Failure(PermanentServiceError(
            f"{endpoint.service} refused access to model '{endpoint.model}' for this API key {suffix}"))
    if status == 404:
        return _Failure(PermanentServiceError(
            f"Model '{endpoint.model}' not found at {endpoint.base_url} {suffix}. Check the model name, and that "
            "the base URL ends in /v1 for OpenAI-compatible servers."))
    if status == 429 and code == "insufficient_quota":
        # A 429 that no amount of waiting fixes: the account is out of credit.
        return _Failure(PermanentServiceError(f"{endpoint.service} quota is exhausted {suffix}"))
    if status in _RETRYABLE_STATUSES or status >= 500:
        message = f"{endpoint.service} is unavailable or rate-limited {suffix}"
        return _Failure(TransientServiceError(message), retry_after=parse_retry_after(exc.response.headers))
    return _Failure(PermanentServiceError(f"{endpoint.service} rejected the request for '{endpoint.model}' {suffix}"))


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(body) if body else exc.message


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None if absent."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(lowered[name]) * scale
        except (KeyError, ValueError):
            continue
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()
