"""Cache locks and semaphores: exclusive, bounded, released on exit and on error, free at once if their holder died."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from backend.core.counters import counter_store
from backend.core.holders import holder_token
from backend.core.locks import LockNotAcquired, cache_lock, cache_semaphore

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def test_lock_is_exclusive_and_released() -> None:
    with cache_lock("a"), pytest.raises(LockNotAcquired), cache_lock("a"):
        pass
    with cache_lock("a"):
        pass


def test_semaphore_admits_exactly_its_slots_and_frees_them_on_error() -> None:
    with (
        cache_semaphore("s", slots=2),
        cache_semaphore("s", slots=2),
        pytest.raises(LockNotAcquired),
        cache_semaphore("s", slots=2),
    ):
        pass
    with pytest.raises(RuntimeError), cache_semaphore("s", slots=1):
        raise RuntimeError("work failed")
    with cache_semaphore("s", slots=1):
        pass


@pytest.fixture
def other_process() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    if process.poll() is None:
        process.kill()
        process.wait()


def test_a_lock_left_by_a_process_that_died_is_taken_at_once(other_process: subprocess.Popen[bytes]) -> None:
    # What a SIGKILLed worker leaves: its leases, unexpired for their whole TTL.
    store, token = counter_store(), holder_token(other_process.pid)
    assert store.claim("lock:run", token, ttl=600) and store.claim("lock:slots:0", token, ttl=600)
    with pytest.raises(LockNotAcquired), cache_lock("run"):
        pass  # its holder still runs
    with pytest.raises(LockNotAcquired), cache_semaphore("slots", slots=1):
        pass
    other_process.send_signal(signal.SIGKILL)
    other_process.wait()
    with cache_lock("run") as held, cache_semaphore("slots", slots=1) as slot:
        assert held.token != token and store.holder("lock:run") == held.token
        assert slot.key == "lock:slots:0"
    assert store.holder("lock:run") is None  # released as usual
