"""Vendor-neutral retries for adapters: backoff with jitter, Retry-After parsing and the retry loop itself."""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from backend.pipeline.errors import ServiceError, TransientServiceError

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often to retry and how long to wait; a server's Retry-After wins over the schedule but is capped too."""

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after the failed attempt number `attempt` (0 for the first)."""
        if retry_after is not None:
            # Capped so that a server asking for an hour cannot stall a request thread for an hour.
            return min(max(retry_after, 0.0), self.backoff_max)
        ceiling = min(self.backoff_max, self.backoff_base * 2.0**attempt)
        # Jitter spreads out workers that all hit the same rate limit at once.
        return ceiling * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class Failure:
    """What one failed attempt means: the error to raise, whether another try may help, and the server's wait."""

    error: ServiceError
    retryable: bool
    retry_after: float | None = None

    @classmethod
    def of(cls, error: ServiceError, retry_after: float | None = None) -> Failure:
        """The usual case: retryable exactly when the error is transient."""
        return cls(error, isinstance(error, TransientServiceError), retry_after)


def call_with_retries(
    operation: Callable[[], T],
    *,
    policy: RetryPolicy,
    classify: Callable[[Exception], Failure | None],
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `operation`, retrying the failures `classify` marks retryable, and raise the last failure's error.

    `classify` returns None for exceptions that are not service failures; those propagate unchanged. The error
    is raised from the original exception, unless `classify` handed back that very exception.
    """
    for attempt in range(policy.max_retries + 1):
        try:
            return operation()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable or attempt == policy.max_retries:
                if failure.error is exc:
                    # Already a project error (e.g. an unusable reply): keep the cause it was raised with.
                    raise
                raise failure.error from exc
        wait = policy.delay(attempt, failure.retry_after)
        logger.info("%s failed (%s); retry %d/%d in %.2fs", what, failure.error, attempt + 1, policy.max_retries,
                    wait)
        sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or an HTTP date); None if absent or unreadable."""
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI's finer variant, preferred) or `retry-after`; None if absent."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _number(lowered.get("retry-after-ms", ""))
    return millis / 1000 if millis is not None else parse_retry_after(lowered.get("retry-after"))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    # NaN would reach time.sleep, which rejects it; infinity is fine, the policy caps it.
    return None if math.isnan(value) else value
