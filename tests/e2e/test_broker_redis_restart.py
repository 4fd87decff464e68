"""Production profile: Redis (append-only, as in docker-compose) restarted with queued work loses nothing."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.support.broker_processes import broker_env, publish, recorded, start_worker, stop, wait_for
from tests.support.sidecars import start_redis

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


def test_queued_and_running_work_survives_a_redis_restart(tmp_path: Path) -> None:
    redis_dir, out, log = tmp_path / "redis", tmp_path / "ran.txt", tmp_path / "worker.log"
    redis = start_redis(work_dir=redis_dir, persistent=True)
    env = broker_env(tmp_path / "data", REDIS_URL=redis.url)
    worker = None
    try:
        # Work queued while no worker runs, then Redis restarts before anyone consumed it.
        assert publish(env, prefix="queued", count=50, out=out).wait(timeout=60) == 0
        redis.stop()
        redis = start_redis(work_dir=redis_dir, port=redis.port, persistent=True)
        worker = start_worker(env, log)
        wait_for(lambda: len(recorded(out)) >= 50, timeout=90, what="the queued tasks after the restart")

        # Redis restarts under a busy worker: running, prefetched and newly published tasks all run.
        assert publish(env, prefix="busy", count=20, out=out, delay=0.3).wait(timeout=60) == 0
        wait_for(lambda: sum(key.startswith("busy") for key in recorded(out)) >= 2, timeout=60, what="busy tasks")
        redis.stop()
        redis = start_redis(work_dir=redis_dir, port=redis.port, persistent=True)
        assert publish(env, prefix="after", count=20, out=out).wait(timeout=60) == 0
        expected = {f"queued-{i}" for i in range(50)} | {f"busy-{i}" for i in range(20)} | {
            f"after-{i}" for i in range(20)}
        wait_for(lambda: set(recorded(out)) >= expected, timeout=180, what="every task after the second restart")
        assert worker.poll() is None
    finally:
        if worker is not None:
            stop(worker)
        redis.stop()
    counts = Counter(recorded(out))
    assert set(counts) == expected
    assert all(counts[f"queued-{i}"] == 1 for i in range(50))  # queued work ran exactly once
