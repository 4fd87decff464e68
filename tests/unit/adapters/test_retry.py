"""The shared retry module: backoff schedule, Retry-After parsing and the retry loop, without real waiting."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable

import pytest

from backend.adapters.retry import (
    Failure,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
    retry_after_from_headers,
)
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError


class FlakyError(Exception):
    """Stands in for a vendor exception."""


class Recorder:
    """A fake `sleep` that remembers how long it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def failing(errors: list[Exception], result: str = "ok") -> Callable[[], str]:
    """An operation that raises each of `errors` in turn, then returns `result`."""
    pending = list(errors)

    def operation() -> str:
        if pending:
            raise pending.pop(0)
        return result

    return operation


def classify_flaky(error: ServiceError, retry_after: float | None = None) -> Callable[[Exception], Failure | None]:
    return lambda exc: Failure.of(error, retry_after) if isinstance(exc, FlakyError) else None


def run(operation: Callable[[], str], classify: Callable[[Exception], Failure | None], sleep: Recorder,
        max_retries: int = 2) -> str:
    policy = RetryPolicy(max_retries=max_retries, backoff_base=1.0, backoff_max=10.0)
    return call_with_retries(operation, policy=policy, classify=classify, what="test call", sleep=sleep)


def test_delay_grows_exponentially_within_jitter_bounds() -> None:
    policy = RetryPolicy(backoff_base=1.0, backoff_max=100.0)
    for attempt in range(5):
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(0.5 * 2**attempt <= delay <= 2**attempt for delay in delays)
        assert len(set(delays)) > 1  # jittered, not a fixed schedule


def test_delay_is_capped_by_backoff_max() -> None:
    policy = RetryPolicy(backoff_base=1.0, backoff_max=3.0)
    assert all(1.5 <= policy.delay(10) <= 3.0 for _ in range(100))


@pytest.mark.parametrize(("retry_after", "expected"), [(2.5, 2.5), (3600.0, 5.0), (-1.0, 0.0), (0.0, 0.0)])
def test_retry_after_wins_but_is_capped(retry_after: float, expected: float) -> None:
    assert RetryPolicy(backoff_base=1.0, backoff_max=5.0).delay(0, retry_after) == expected


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("2", 2.0), ("0.4", 0.4), (" 7 ", 7.0), ("soon", None), ("", None), ("nan", None), (None, None)],
)
def test_parse_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_parse_retry_after_http_date() -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (parse_retry_after(later) or 0) <= 30


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "2"}, 2.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After-Ms": "250", "Retry-After": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_from_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_from_headers(headers) == seconds


def test_success_needs_no_sleep() -> None:
    sleep = Recorder()
    assert run(failing([]), classify_flaky(TransientServiceError("busy")), sleep) == "ok"
    assert sleep.waits == []


def test_transient_failure_is_retried_then_succeeds() -> None:
    sleep = Recorder()
    operation = failing([FlakyError(), FlakyError()])
    assert run(operation, classify_flaky(TransientServiceError("busy")), sleep) == "ok"
    assert len(sleep.waits) == 2
    assert 0.5 <= sleep.waits[0] <= 1.0 and 1.0 <= sleep.waits[1] <= 2.0


def test_transient_failure_raises_after_the_last_attempt_from_the_original() -> None:
    sleep = Recorder()
    original = FlakyError("boom")
    with pytest.raises(TransientServiceError, match="busy") as raised:
        run(failing([original] * 3), classify_flaky(TransientServiceError("busy")), sleep)
    assert raised.value.__cause__ is original
    assert len(sleep.waits) == 2


def test_retry_after_from_the_failure_sets_the_wait() -> None:
    sleep = Recorder()
    run(failing([FlakyError()]), classify_flaky(TransientServiceError("busy"), retry_after=3600), sleep)
    assert sleep.waits == [10.0]


def test_permanent_failure_is_raised_at_once() -> None:
    sleep = Recorder()
    original = FlakyError("denied")
    with pytest.raises(PermanentServiceError, match="bad key") as raised:
        run(failing([original, FlakyError()]), classify_flaky(PermanentServiceError("bad key")), sleep)
    assert raised.value.__cause__ is original
    assert sleep.waits == []


def test_unknown_exception_is_reraised_unchanged() -> None:
    sleep = Recorder()
    with pytest.raises(KeyError, match="not ours"):
        run(failing([KeyError("not ours")]), classify_flaky(TransientServiceError("busy")), sleep)
    assert sleep.waits == []


def test_a_service_error_from_the_operation_keeps_its_own_cause() -> None:
    """An operation's own TransientServiceError is retried and re-raised as is, not chained to itself."""
    sleep = Recorder()
    root = ValueError("bad JSON")
    own = TransientServiceError("unusable reply")
    own.__cause__ = root

    def classify(exc: Exception) -> Failure | None:
        return Failure.of(exc) if isinstance(exc, ServiceError) else None

    with pytest.raises(TransientServiceError) as raised:
        run(failing([own] * 2), classify, sleep, max_retries=1)
    assert raised.value is own and raised.value.__cause__ is root
    assert len(sleep.waits) == 1


def test_zero_retries_makes_one_attempt() -> None:
    sleep = Recorder()
    with pytest.raises(TransientServiceError):
        run(failing([FlakyError(), FlakyError()]), classify_flaky(TransientServiceError("busy")), sleep, max_retries=0)
    assert sleep.waits == []
