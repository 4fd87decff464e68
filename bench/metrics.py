"""Cost of counting a request for /metrics on the embedded default (SQLite): buffered in memory vs. a write each.

Eight threads stand for a web process's request threads, each making a call about every millisecond.
Measured: the time one `request_finished` call takes while the recorder publishes to the SQLite file
database every second in the background (what the product does), against the baseline of one counter
upsert per request on the same database (what a shared counter without buffering would cost), and how
many SQLite write transactions each way made. Headline ratio: buffered p99 / per-request-write p99.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
THREADS = 8
PERIOD_S = 1
GAP_S = 0.001  # each thread: at most one call per millisecond (8 threads: ≤ 8,000 calls/s)


def _setup(data_dir: Path) -> None:
    os.environ.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base",
                      OPENGURU_METRICS_FLUSH_SECONDS=str(PERIOD_S), OPENGURU_LOG_LEVEL="ERROR")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _race(call: Callable[[int], None], *, calls: int = 0, seconds: float = 0.0) -> tuple[list[float], float]:
    """Run `call(i)` in each of THREADS threads, `calls` times or for `seconds`; per-call µs and the wall time."""
    from django.db import connection

    start, timings = threading.Barrier(THREADS), [[] for _ in range(THREADS)]

    def run(slot: int) -> None:
        start.wait()
        deadline, i = time.perf_counter() + seconds, 0
        while (i < calls) if calls else (time.perf_counter() < deadline):
            began = time.perf_counter_ns()
            call(i)
            timings[slot].append((time.perf_counter_ns() - began) / 1000)
            i += 1
            time.sleep(GAP_S)  # requests arrive; a tight loop would measure waiting for the GIL instead
        connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [t for slot in timings for t in slot], time.perf_counter() - began


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


class CountingStore:
    """The real database store, counting the write transactions (publishes) made through it."""

    def __init__(self) -> None:
        from backend.core.metrics_store import DatabaseMetricsStore

        self.store, self.writes = DatabaseMetricsStore(), 0

    def publish(self, counts: dict[str, int], gauges: dict[str, int] | None, *, instance: str, ttl: float) -> None:
        self.writes += 1
        self.store.publish(counts, gauges, instance=instance, ttl=ttl)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls (< 60 s)")
    args = parser.parse_args()
    per_thread, seconds = (400, 3.0) if args.quick else (2000, 10.0)
    with tempfile.TemporaryDirectory(prefix="bench-metrics-") as tmp:
        _setup(Path(tmp))
        from backend.core import metrics

        counting = CountingStore()
        # The product's recorder (background publisher every PERIOD_S), publishing through the counting store.
        metrics._recorder = metrics.Recorder(store=lambda: counting)  # type: ignore[arg-type, return-value]
        routes = [f"route-{n}" for n in range(20)]
        buffered, buffered_wall = _race(lambda i: metrics.request_finished("GET", routes[i % 20], 200),
                                        seconds=seconds)
        metrics.publish()  # what the background thread would write at its next period
        assert sum(v for k, v in counting.store.totals().items() if "route-" in k) == len(buffered)
        key = metrics.series_key(metrics.HTTP_REQUESTS, "GET", "baseline", "2xx")
        store = counting.store
        direct, direct_wall = _race(lambda i: store.publish({key: 1}, None, instance="b", ttl=60), calls=per_thread)
        assert store.totals()[key] == len(direct)
        from backend.core.metrics_collector import render

        scrapes = []
        for _ in range(20):
            began = time.perf_counter()
            body, _ = render()
            scrapes.append((time.perf_counter() - began) * 1000)
        assert b"openguru_scrape_part_up" in body and b'part="broker"} 1.0' in body
    print(f"{THREADS} threads; SQLite file database in WAL mode, as `./openguru start` runs")
    print(f"buffered (product): {len(buffered):,} calls in {buffered_wall:.1f} s, p50 {_p(buffered, 50):.1f} µs, "
          f"p99 {_p(buffered, 99):.1f} µs; {counting.writes} SQLite write transactions (one per {PERIOD_S} s "
          "period with counts, plus the last)")
    print(f"one write per call (baseline): {len(direct):,} calls in {direct_wall:.1f} s, p50 {_p(direct, 50):.1f} "
          f"µs, p99 {_p(direct, 99):.1f} µs; {len(direct):,} SQLite write transactions")
    print(f"one scrape (/metrics body, {len(body):,} bytes): median {statistics.median(scrapes):.1f} ms")
    ratio = _p(buffered, 99) / _p(direct, 99)
    print(f"record_us_p99={_p(buffered, 99):.1f} baseline_write_us_p99={_p(direct, 99):.1f} "
          f"target=record_us_p99<=50 ratio={ratio:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
