"""The embedded broker: our crash-safe filesystem transport vs. kombu's SQLAlchemy transport on SQLite.

Each transport gets a real prefork Celery worker (concurrency 2, prefetch 1, acks late, 0.1 s polling)
on tests/support/stress_app.py. Measured per transport: publish-to-start latency of single tasks on an
idle worker (median), the worker's idle CPU (main + pool processes), and throughput of a few hundred
tasks published from one process. Baseline: `sqla+sqlite://`. Headline ratio: our publish-to-start
latency / the baseline's (lower is better; ingestion tasks run for seconds to minutes, so the delay
before one starts matters more than burst throughput, which is printed too).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.broker_processes import broker_env, start_worker, stop, wait_for  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PUBLISH = """
import sys, time
from tests.support.stress_app import stamp
out, count, spacing = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for i in range(count):
    print(f"k{i} {time.time():.6f}", flush=True)
    stamp.delay(f"k{i}", out)
    time.sleep(spacing)
"""


@dataclass
class Result:
    latency_ms: float
    idle_cpu_pct: float
    tasks_per_s: float
    note: str = ""


def _tree_cpu_seconds(pid: int) -> float:
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat.parent.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def _stamps(out: Path) -> dict[str, float]:
    if not out.exists():
        return {}
    return {key: float(at) for key, at in (line.split() for line in out.read_text().splitlines() if line)}


def _publish(env: dict[str, str], out: Path, count: int, spacing: float) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", PUBLISH, str(out), str(count), str(spacing)], cwd=REPO,
                          env=env, capture_output=True, text=True, check=True)
    return {key: float(at) for key, at in (line.split() for line in done.stdout.splitlines())}


def _measure(env: dict[str, str], work: Path, *, samples: int, idle_s: float, tasks: int) -> Result:
    worker = start_worker(env, work / "worker.log")
    try:
        warm = work / "warm.txt"
        _publish(env, warm, 1, 0)
        wait_for(lambda: len(_stamps(warm)) == 1, timeout=120, what="the worker to start")
        time.sleep(1.0)  # let start-up work settle before measuring idle CPU
        before = _tree_cpu_seconds(worker.pid)
        time.sleep(idle_s)
        idle = (_tree_cpu_seconds(worker.pid) - before) / idle_s * 100
        single = work / "single.txt"
        sent = _publish(env, single, samples, 0.5)
        wait_for(lambda: len(_stamps(single)) == samples, timeout=120, what="single tasks")
        latencies = [(_stamps(single)[k] - sent[k]) * 1000 for k in sent]
        burst = work / "burst.txt"
        start = time.time()
        _publish(env, burst, tasks, 0)
        wait_for(lambda: len(_stamps(burst)) == tasks, timeout=600, what="the burst")
        rate = tasks / (max(_stamps(burst).values()) - start)
    finally:
        stop(worker)
    return Result(statistics.median(latencies), idle, rate)


def _sqla_rows(path: Path) -> str:
    with sqlite3.connect(path) as db:
        total, visible = db.execute("SELECT count(*), sum(visible) FROM kombu_message").fetchone()
    return f"{total} rows left, {visible or 0} visible"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples and tasks (< 60 s)")
    quick = parser.parse_args().quick
    samples, idle_s, tasks = (5, 3.0, 100) if quick else (20, 10.0, 300)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "fs").mkdir()
        ours = _measure(broker_env(work / "fs" / "data"), work / "fs", samples=samples, idle_s=idle_s, tasks=tasks)
        (work / "sqla").mkdir()
        db = work / "sqla" / "broker.sqlite3"
        env = broker_env(work / "sqla" / "data", OPENGURU_STRESS_BROKER_URL=f"sqla+sqlite:///{db}")
        base = _measure(env, work / "sqla", samples=samples, idle_s=idle_s, tasks=tasks)
        base.note = _sqla_rows(db)
    for name, result in (("openguru-fs", ours), ("sqla+sqlite", base)):
        print(f"{name}: latency_ms={result.latency_ms:.1f} idle_cpu_pct={result.idle_cpu_pct:.2f} "
              f"tasks_per_s={result.tasks_per_s:.1f} {result.note}")
    print(f"broker_latency_ms={ours.latency_ms:.1f} baseline_latency_ms={base.latency_ms:.1f} "
          f"tasks_per_s={ours.tasks_per_s:.1f} baseline_tasks_per_s={base.tasks_per_s:.1f} "
          f"idle_cpu_pct={ours.idle_cpu_pct:.2f} baseline_idle_cpu_pct={base.idle_cpu_pct:.2f} "
          f"target=0.5 ratio={ours.latency_ms / base.latency_ms:.3f}")


if __name__ == "__main__":
    main()
