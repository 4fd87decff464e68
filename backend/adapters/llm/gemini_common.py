"""Shared plumbing for the google-genai adapters: client construction, retries with backoff, error translation."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import httpx2
import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from backend.adapters.retry import Failure, RetryPolicy
from backend.adapters.retry import call_with_retries as _call_with_retries
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError

T = TypeVar("T")

# google-genai sends requests through httpx2 by default and through plain httpx when GOOGLE_GENAI_HTTP_CLIENT or
# a caller-supplied client picks it, so connection failures can come from either library.
_HTTP_LIBRARIES: list[Any] = [httpx2]
try:
    import httpx
except ImportError:  # httpx is optional for google-genai
    pass
else:
    _HTTP_LIBRARIES.append(httpx)
_TRANSPORT_ERRORS: tuple[type[Exception], ...] = tuple(lib.HTTPError for lib in _HTTP_LIBRARIES)
_TIMEOUT_ERRORS: tuple[type[Exception], ...] = tuple(lib.TimeoutException for lib in _HTTP_LIBRARIES)
_BAD_URL_ERRORS: tuple[type[Exception], ...] = tuple(
    error for lib in _HTTP_LIBRARIES for error in (lib.InvalidURL, lib.UnsupportedProtocol)
)

# A 200 whose body the SDK cannot read (truncated JSON, unexpected shape) is a server hiccup, not our bug.
_UNREADABLE_RESPONSE_ERRORS: tuple[type[Exception], ...] = (
    genai_errors.UnknownApiResponseError,
    json.JSONDecodeError,
    pydantic.ValidationError,
)

VENDOR_ERRORS: tuple[type[Exception], ...] = (
    genai_errors.APIError,
    *_BAD_URL_ERRORS,
    *_TRANSPORT_ERRORS,
    *_UNREADABLE_RESPONSE_ERRORS,
)
"""Every exception the SDK raises for a failed call; `translate_error` turns each into a ServiceError."""

# 408 request timeout and 499 cancelled come from Google's front end under load; both succeed on a later try.
_RETRYABLE_STATUSES = frozenset({408, 429, 499})


class GeminiClient:
    """Builds the genai.Client lazily (once per process, so forked workers get their own connections)."""

    def __init__(self, *, api_key: str, base_url: str | None, timeout: float) -> None:
        self._api_key = api_key.strip()
        self._base_url = base_url
        self._timeout = timeout
        self._state: tuple[int, genai.Client] | None = None
        self._lock = threading.Lock()

    def get(self) -> genai.Client:
        state = self._state
        if state is None or state[0] != os.getpid():
            # One client per process: a dropped genai.Client closes its HTTP connections when collected, and
            # callers keep only `client.models`, so a second one built by a concurrent first call (the grade
            # and the answer start side by side) would fail the other call with "client has been closed".
            with self._lock:
                state = self._state
                if state is None or state[0] != os.getpid():
                    state = (os.getpid(), self._build())
                    self._state = state
        return state[1]

    def _build(self) -> genai.Client:
        if not self._api_key:
            # Without a key the SDK would silently read GOOGLE_API_KEY / GEMINI_API_KEY from the environment.
            raise PermanentServiceError("No Gemini API key is configured.")
        options = types.HttpOptions(
            base_url=self._base_url,
            timeout=max(1, round(self._timeout * 1000)),  # the SDK takes milliseconds
            # One attempt: call_with_retries owns the retry policy, so retries never multiply.
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=self._api_key, http_options=options)


def call_with_retries(operation: Callable[[], T], *, policy: RetryPolicy, model: str, what: str) -> T:
    """Run `operation`, retrying transient failures; raises only TransientServiceError or PermanentServiceError.

    `operation` may itself raise TransientServiceError for a 200 reply it cannot use (e.g. invalid JSON);
    that is retried like a 5xx.
    """
    return _call_with_retries(operation, policy=policy, classify=partial(_classify, model=model),
                              what=f"Gemini {what} for {model}")


def _classify(exc: Exception, *, model: str) -> Failure | None:
    if isinstance(exc, VENDOR_ERRORS):
        return Failure.of(translate_error(exc, model=model))
    if isinstance(exc, TransientServiceError):
        return Failure.of(exc)
    return None


def translate_error(exc: Exception, *, model: str) -> ServiceError:
    """The project error for an SDK exception (also used where retrying is impossible, e.g. mid-stream)."""
    if isinstance(exc, genai_errors.APIError):
        return _from_status(exc, model=model)
    if isinstance(exc, _BAD_URL_ERRORS):
        return PermanentServiceError(f"The Gemini base URL is not usable: {exc}")
    if isinstance(exc, _TIMEOUT_ERRORS):
        return TransientServiceError(f"Gemini did not answer in time ({type(exc).__name__})")
    if isinstance(exc, _TRANSPORT_ERRORS):
        return TransientServiceError(f"Cannot reach Gemini: {type(exc).__name__}: {exc}")
    return TransientServiceError(f"Gemini sent a reply that cannot be read ({type(exc).__name__}: {exc})")


def _from_status(exc: genai_errors.APIError, *, model: str) -> ServiceError:
    code, status, message = exc.code, exc.status or "", exc.message or ""
    suffix = f"(HTTP {code} {status}): {message}".rstrip(": ")
    if code in (401, 403) or _is_invalid_key(exc):
        return PermanentServiceError(f"Gemini rejected the API key {suffix}")
    if code == 404:
        return PermanentServiceError(
            f"Gemini model '{model}' not found, or it does not support this call {suffix}. Check the model name."
        )
    if code in _RETRYABLE_STATUSES or code >= 500:
        return TransientServiceError(f"Gemini is unavailable or rate-limiting {suffix}")
    return PermanentServiceError(f"Gemini rejected the request for '{model}' {suffix}")


def _is_invalid_key(exc: genai_errors.APIError) -> bool:
    """Google answers a wrong key with 400 INVALID_ARGUMENT and an ErrorInfo reason of API_KEY_INVALID."""
    error = exc.details.get("error", exc.details) if isinstance(exc.details, dict) else {}
    details: Any = error.get("details") if isinstance(error, dict) else None
    reasons = {item.get("reason") for item in details or [] if isinstance(item, dict)}
    return "API_KEY_INVALID" in reasons or "API key not valid" in (exc.message or "")
