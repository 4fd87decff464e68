"""Shared plumbing for OpenAI-SDK adapters: client construction, retries with backoff, error translation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import openai

from backend.adapters.retry import Failure, RetryPolicy, retry_after_from_headers
from backend.adapters.retry import call_with_retries as _call_with_retries
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError

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


def call_with_retries(operation: Callable[[], T], *, policy: RetryPolicy, endpoint: Endpoint, what: str) -> T:
    """Run `operation`, retrying transient failures; raises only TransientServiceError or PermanentServiceError."""
    return _call_with_retries(operation, policy=policy, classify=partial(_classify, endpoint=endpoint),
                              what=f"{what} for {endpoint.model}")


def translate_error(exc: openai.OpenAIError | UnusableResponseError, endpoint: Endpoint) -> ServiceError:
    """The project error for an SDK exception (used where retrying is impossible, e.g. mid-stream)."""
    return _failure(exc, endpoint).error


def _classify(exc: Exception, endpoint: Endpoint) -> Failure | None:
    if isinstance(exc, openai.OpenAIError | UnusableResponseError):
        return _failure(exc, endpoint)
    return None


def _failure(exc: openai.OpenAIError | UnusableResponseError, endpoint: Endpoint) -> Failure:
    if isinstance(exc, UnusableResponseError):
        return Failure.of(TransientServiceError(f"{endpoint.service} returned an unusable reply: {exc}"))
    if isinstance(exc, openai.APITimeoutError):
        return Failure.of(TransientServiceError(f"{endpoint.service} did not answer in time"))
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure.of(TransientServiceError(f"Cannot reach {endpoint.base_url}: {cause}"))
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, endpoint)
    return Failure.of(TransientServiceError(f"{endpoint.service} failed: {exc}"))


def _status_failure(exc: openai.APIStatusError, endpoint: Endpoint) -> Failure:
    status, detail, code = exc.status_code, _detail(exc), exc.code
    suffix = f"(HTTP {status}): {detail}"
    if status == 401:
        return Failure.of(PermanentServiceError(f"{endpoint.service} rejected the API key {suffix}"))
    if status == 403:
        return Failure.of(PermanentServiceError(
            f"{endpoint.service} refused access to model '{endpoint.model}' for this API key {suffix}"))
    if status == 404:
        return Failure.of(PermanentServiceError(
            f"Model '{endpoint.model}' not found at {endpoint.base_url} {suffix}. Check the model name, and that "
            "the base URL ends in /v1 for OpenAI-compatible servers."))
    if status == 429 and code == "insufficient_quota":
        # A 429 that no amount of waiting fixes: the account is out of credit.
        return Failure.of(PermanentServiceError(f"{endpoint.service} quota is exhausted {suffix}"))
    if status in _RETRYABLE_STATUSES or status >= 500:
        message = f"{endpoint.service} is unavailable or rate-limited {suffix}"
        return Failure.of(TransientServiceError(message), retry_after_from_headers(exc.response.headers))
    return Failure.of(PermanentServiceError(f"{endpoint.service} rejected the request for '{endpoint.model}' {suffix}"))


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(body) if body else exc.message
