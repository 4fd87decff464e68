"""The counter store under rate limits and locks: one contract for both stores, atomic across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.cache import cache

from backend.core import counters
from backend.core.counters import CounterStore, DatabaseCounterStore, RedisCounterStore
from backend.core.locks import LockNotAcquired, cache_lock
from backend.core.ratelimit import hit
from tests.support.web_process import REPO, database_env

pytestmark = [pytest.mark.production_profile]
PROCESSES = 4


def _stores() -> list[str]:
    return ["database", "redis"] if os.environ.get("REDIS_URL") else ["database"]


@pytest.fixture(params=_stores())
def store(request: pytest.FixtureRequest, db: None) -> Iterator[CounterStore]:
    cache.clear()  # Redis keys outlive the test
    yield DatabaseCounterStore() if request.param == "database" else RedisCounterStore()
    cache.clear()


def test_increments_count_up_and_down_per_key(store: CounterStore) -> None:
    assert [store.increment("a", ttl=60) for _ in range(3)] == [1, 2, 3]
    assert store.increment("a", ttl=60, delta=-1) == 2
    assert store.increment("b", ttl=60) == 1
    long_key = "login-fail:user:" + "x" * 300
    assert [store.increment(long_key, ttl=60), store.increment(long_key + "y", ttl=60)] == [1, 1]


def test_increment_within_is_all_or_nothing(store: CounterStore) -> None:
    assert store.increment_within(["ip", "user"], limit=2, ttl=60)
    assert store.increment("user", ttl=60) == 2
    assert not store.increment_within(["ip", "user"], limit=2, ttl=60)  # user would pass the limit …
    assert store.increment("ip", ttl=60) == 2  # … so ip was not counted either


def test_a_lease_has_one_holder_until_released(store: CounterStore) -> None:
    assert store.claim("l", "me", ttl=60)
    assert not store.claim("l", "you", ttl=60)
    store.release("l", "you")  # not the holder: nothing happens
    assert not store.claim("l", "you", ttl=60)
    assert store.renew("l", "me", ttl=60) and not store.renew("l", "you", ttl=60)
    store.release("l", "me")
    assert store.claim("l", "you", ttl=60)


def test_a_lease_names_its_holder_and_is_taken_over_only_from_that_holder(store: CounterStore) -> None:
    assert store.holder("t") is None
    assert store.claim("t", "dead", ttl=60) and store.holder("t") == "dead"
    assert not store.take_over("t", "someone-else", "me", ttl=60)  # the holder changed since it was read
    assert store.holder("t") == "dead"
    assert store.take_over("t", "dead", "me", ttl=60) and store.holder("t") == "me"
    assert not store.claim("t", "you", ttl=60) and store.renew("t", "me", ttl=60)
    store.release("t", "me")
    assert store.holder("t") is None and not store.take_over("t", "me", "you", ttl=60)


@pytest.mark.django_db
def test_expired_database_rows_count_as_absent_and_are_purged(monkeypatch: pytest.MonkeyPatch) -> None:
    store, now = DatabaseCounterStore(), time.time()
    assert store.increment("old", ttl=60) == 1 and store.claim("lease", "dead", ttl=60)
    monkeypatch.setattr(counters, "time", SimpleNamespace(time=lambda: now + 120))
    assert store.increment("old", ttl=60) == 1  # the expired window starts again
    assert store.claim("lease", "alive", ttl=60)  # a dead holder's lease is taken over
    assert store.increment("new", ttl=60) == 1
    assert counters.Counter.objects.filter(expires_at__lt=now + 120).count() == 0


@pytest.mark.django_db
def test_a_held_lock_survives_many_rate_limit_counters() -> None:
    # The database cache culled a third of its entries past MAX_ENTRIES (300), locks first: a second
    # worker then took a lock that was still held.
    cache.clear()
    with cache_lock("guru-collection"):
        for i in range(400):
            hit(f"widget:1:ip:198.51.{i // 256}.{i % 256}", limit=10)
        with pytest.raises(LockNotAcquired), cache_lock("guru-collection"):
            pass


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", _stores())
def test_increments_and_claims_are_atomic_across_processes_and_threads(tmp_path: Path, kind: str) -> None:
    cache.clear()
    path = f"backend.core.counters.{'Database' if kind == 'database' else 'Redis'}CounterStore"
    env = database_env(tmp_path / "race")
    go = tmp_path / f"go-{uuid.uuid4().hex}"
    racers = [subprocess.Popen([sys.executable, "-m", "tests.support.counter_race", str(go), path], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline().strip() == "ready", racer.stderr
        go.touch()
        results = [json.loads(racer.communicate(timeout=180)[0].strip().splitlines()[-1]) for racer in racers]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
    values = sorted(value for result in results for value in result["values"])
    # Every increment got its own value (none lost, none repeated) and exactly one thread took the lease.
    assert values == list(range(1, len(values) + 1)) and len(values) == PROCESSES * 8 * 20
    assert sum(result["claims"] for result in results) == 1
