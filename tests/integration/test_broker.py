"""The embedded broker with real processes: concurrent publishers, garbage messages, a SIGKILLed worker."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.support.broker_processes import (
    broker_env,
    kill_group,
    publish,
    recorded,
    start_worker,
    stop,
    wait_for,
)

pytestmark = pytest.mark.slow

PUBLISHERS = 4
PER_PUBLISHER = 100
# Big enough that writing one message takes a while: a reader meets messages being written.
PAD_BYTES = 64 * 1024


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def _queue(data_dir: Path) -> Path:
    return data_dir / "broker" / "queue"


def test_hundreds_of_tasks_from_several_processes_each_run_exactly_once(data_dir: Path, tmp_path: Path) -> None:
    env, out = broker_env(data_dir), tmp_path / "ran.txt"
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        publishers = [publish(env, prefix=f"p{n}", count=PER_PUBLISHER, out=out, pad=PAD_BYTES)
                      for n in range(PUBLISHERS)]
        assert all(p.wait(timeout=120) == 0 for p in publishers)
        total = PUBLISHERS * PER_PUBLISHER
        wait_for(lambda: len(recorded(out)) >= total or worker.poll() is not None, timeout=120, what="all tasks")
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
    finally:
        stop(worker)
    counts = Counter(recorded(out))
    expected = {f"p{n}-{i}" for n in range(PUBLISHERS) for i in range(PER_PUBLISHER)}
    assert set(counts) == expected
    assert max(counts.values()) == 1  # nothing ran twice
    assert not list(_queue(data_dir).iterdir())  # and nothing is left behind


def test_an_unreadable_message_is_set_aside_and_the_worker_keeps_consuming(data_dir: Path, tmp_path: Path) -> None:
    env, out = broker_env(data_dir), tmp_path / "ran.txt"
    queue = _queue(data_dir)
    queue.mkdir(parents=True)
    # What a reader of kombu's own transport could meet: a file still being written (empty, cut
    # short), and plain garbage or an envelope whose body does not decode.
    (queue / "00000000000000000001_a.celery.msg").write_bytes(b"")
    (queue / "00000000000000000002_b.celery.msg").write_bytes(b'{"body": "eyJh", "prop')
    (queue / "00000000000000000003_c.celery.msg").write_bytes(b"\xff\xfe not json")
    (queue / "00000000000000000004_d.celery.msg").write_bytes(
        b'{"body": "!!!", "content-type": "application/json", "properties": '
        b'{"delivery_tag": "x", "body_encoding": "base64"}, "headers": {}}'
    )
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        assert publish(env, prefix="ok", count=3, out=out).wait(timeout=60) == 0
        wait_for(lambda: len(recorded(out)) == 3 or worker.poll() is not None, timeout=60, what="good tasks")
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
    finally:
        stop(worker)
    assert sorted(recorded(out)) == ["ok-0", "ok-1", "ok-2"]
    quarantine = sorted(p.name for p in (data_dir / "broker" / "quarantine").iterdir())
    assert [name.split("_")[1] for name in quarantine] == ["a.celery.msg", "b.celery.msg", "c.celery.msg",
                                                           "d.celery.msg"]
    assert "was set aside" in (tmp_path / "worker.log").read_text()


def _claims(data_dir: Path) -> list[Path]:
    """Messages a consumer has claimed and not acknowledged (the broker's unacked/<owner>/ folders)."""
    return list((data_dir / "broker" / "unacked").glob("*/*.msg"))


def test_tasks_held_by_a_sigkilled_worker_are_redelivered(data_dir: Path, tmp_path: Path) -> None:
    env, out, log = broker_env(data_dir), tmp_path / "ran.txt", tmp_path / "worker.log"
    worker = start_worker(env, log)
    count = 20
    try:
        assert publish(env, prefix="slow", count=count, out=out, delay=0.5).wait(timeout=60) == 0
        # Mid-task: claims on disk are tasks running (acks_late, prefetch 1). Between two tasks a busy worker
        # may hold none, and a kill then leaves nothing to put back: wait until it holds some.
        wait_for(lambda: len(recorded(out)) >= 3 and bool(_claims(data_dir)), timeout=60, what="tasks running")
        kill_group(worker)
        assert _claims(data_dir), "the worker held no claim when it was killed"
        done_before = set(recorded(out))
        assert len(done_before) < count
        worker = start_worker(env, log)
        wait_for(lambda: set(recorded(out)) >= {f"slow-{i}" for i in range(count)}, timeout=90,
                 what="redelivery of the killed worker's tasks")
    finally:
        stop(worker)
    counts = Counter(recorded(out))
    assert set(counts) == {f"slow-{i}" for i in range(count)}
    # At-least-once: only what was running at the kill may run twice (the pool has 2 processes).
    assert sum(counts.values()) - count <= 2
    assert "put back in the queue" in log.read_text()
