"""Cache locks and semaphores: exclusive, bounded, released on exit and on error."""

from __future__ import annotations

import pytest

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
