"""The metrics stores (database and Redis) pass one contract, and a process's recorder publishes through them."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from backend.core import metrics
from backend.core.metrics import Recorder
from backend.core.metrics_store import DatabaseMetricsStore, MetricsStore, RedisMetricsStore
from backend.core.models import Counter
from backend.core.sidecars import free_port

pytestmark = [pytest.mark.production_profile]
STREAMS = metrics.series_key(metrics.STREAMS)


def _stores() -> list[str]:
    return ["database", "redis"] if os.environ.get("REDIS_URL") else ["database"]


def _clear_redis() -> None:
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    keys = [RedisMetricsStore.COUNTERS, *client.scan_iter(match=RedisMetricsStore.LIVE + "*")]
    client.delete(*keys)


@pytest.fixture(params=_stores())
def store(request: pytest.FixtureRequest, db: None) -> Iterator[MetricsStore]:
    if request.param == "redis":
        _clear_redis()  # Redis keys outlive the test database's rollback
        yield RedisMetricsStore()
        _clear_redis()
    else:
        yield DatabaseMetricsStore()


def test_counts_from_several_publishes_add_up(store: MetricsStore) -> None:
    store.publish({"a": 2, "b": 1}, None, instance="p1", ttl=60)
    store.publish({"a": 3, "c": 0}, None, instance="p2", ttl=60)
    assert store.totals() == {"a": 5, "b": 1}  # zero deltas write nothing


def test_gauges_are_summed_over_instances_and_replaced_per_instance(store: MetricsStore) -> None:
    store.publish({}, {"streams": 3, "other": 1}, instance="p1", ttl=60)
    store.publish({}, {"streams": 2}, instance="p2", ttl=60)
    assert store.live() == {"streams": 5, "other": 1}
    store.publish({}, {"streams": 1}, instance="p1", ttl=60)  # p1's "other" went back to 0
    assert store.live() == {"streams": 3}
    store.publish({}, {}, instance="p2", ttl=60)  # withdrawn (the process is exiting)
    assert store.live() == {"streams": 1}
    assert store.totals() == {}  # gauges never leak into the counters


def test_gauges_of_a_silent_instance_expire(store: MetricsStore) -> None:
    store.publish({}, {"streams": 4}, instance="gone", ttl=0.001)
    store.publish({}, {"streams": 1}, instance="alive", ttl=60)
    deadline = time.monotonic() + 10
    while (live := store.live()) != {"streams": 1} and time.monotonic() < deadline:
        continue  # the 1 ms expiry passes while we look
    assert live == {"streams": 1}


@pytest.mark.django_db
def test_database_counter_rows_survive_the_rate_limit_purge() -> None:
    DatabaseMetricsStore().publish({"a": 1}, None, instance="p", ttl=60)
    Counter.objects.filter(expires_at__lt=1e12).delete()  # what counters._purge does to finished windows
    assert DatabaseMetricsStore().totals() == {"a": 1}


@pytest.mark.django_db
def test_an_idle_recorder_writes_nothing() -> None:
    recorder = Recorder(store=DatabaseMetricsStore)
    with CaptureQueriesContext(connection) as queries:
        assert recorder.publish()
        recorder.shift(STREAMS, 1)
        recorder.shift(STREAMS, -1)  # opened and closed between two publishes: nothing to report
        assert recorder.publish()
    assert len(queries) == 0


def test_a_recorder_publishes_counts_once_and_keeps_gauges_alive(store: MetricsStore) -> None:
    recorder = Recorder(store=lambda: store)
    key = metrics.series_key(metrics.TASKS, "sources.index", "success")
    recorder.count(key)
    recorder.count(key, 2)
    recorder.shift(STREAMS, 2)
    assert recorder.publish() and recorder.publish()  # the second sends no counts, only refreshes the gauge
    assert store.totals() == {key: 3} and store.live() == {STREAMS: 2}
    recorder.shift(STREAMS, -2)
    assert recorder.publish() and store.live() == {}
    recorder.shift(STREAMS, 1)
    assert recorder.publish(final=True) and store.live() == {}  # an exiting process withdraws its gauges


@pytest.mark.django_db
def test_a_failed_publish_keeps_the_counts_for_the_next_one(caplog: pytest.LogCaptureFixture) -> None:
    unreachable = RedisMetricsStore(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    working = DatabaseMetricsStore()
    target: list[MetricsStore] = [unreachable]
    recorder = Recorder(store=lambda: target[0])
    recorder.count("k", 4)
    assert not recorder.publish()
    assert "could not publish" in caplog.text and recorder.pending() == {"k": 4}
    recorder.count("k")
    target[0] = working
    assert recorder.publish() and working.totals() == {"k": 5} and recorder.pending() == {}


@pytest.mark.django_db
def test_recording_never_raises_into_the_caller(caplog: pytest.LogCaptureFixture) -> None:
    before = metrics.recorder().pending()
    metrics.answer_finished(state="COMPLETE", channel="WEB", usage={"answer": "not a mapping"})  # type: ignore[dict-item]
    assert "could not record answer_finished" in caplog.text
    key = metrics.series_key(metrics.ANSWERS, "complete", "web")
    assert metrics.recorder().pending().get(key, 0) == before.get(key, 0) + 1  # what could be counted was
