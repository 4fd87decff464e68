"""Concurrent streamed answers through the running product, against the fake LLM's own figures.

A paced OpenAI-compatible fake (tests/fakes/paced_llm.py, its own process: 60 tokens at 20 tokens/s,
first token after 50 ms) answers; the product indexes a generated documentation site; an asyncio client
on loopback asks different questions over SSE with an API key. Baseline: the same client streaming
straight from the fake LLM at the same concurrency. Measured: bursts of N simultaneous streams and
open-loop arrivals at R answers/s (optionally while a 1,000-page source re-indexes): throughput,
p50/p95/p99 time to first byte, first token and last byte, errors, and CPU ms per answer in our
processes. Profiles: `embedded` (the launcher) and `production` (nginx → uvicorn workers → PostgreSQL,
Redis, Milvus server, two Celery workers and beat; tests/support/topology.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from backend.core.sidecars import free_port, wait_for_port  # noqa: E402
from bench import load_corpus  # noqa: E402
from bench.load_client import Run, answer_request, burst, llm_request, open_loop  # noqa: E402
from bench.load_stack import Stack, start_stack  # noqa: E402

LLM_TOKEN = b'"content": "The"'
ANSWER_TOKEN = b"event: delta"
TARGET_BURST, TARGET_RATE, TARGET_OVERHEAD_MS = 200, 30.0, 300.0


@contextmanager
def paced_llm(work: Path) -> Iterator[str]:
    """The fake LLM in its own uvicorn process; its base URL."""
    port = free_port()
    with (work / "paced-llm.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "tests.fakes.paced_llm:app", "--host", "127.0.0.1", "--port", str(port),
             "--no-access-log", "--log-level", "warning", "--backlog", "2048"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port("127.0.0.1", port, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _row(run: Run, baseline: Run | None, cpu_ms: float | None) -> dict[str, Any]:
    row = run.summary()
    if baseline is not None:
        row["llm_first_token_p95_ms"] = round(baseline.pct("first_token", 0.95) * 1000, 1)
        row["first_token_overhead_p95_ms"] = round(row["first_token_p95_ms"] - row["llm_first_token_p95_ms"], 1)
    if cpu_ms is not None and run.ok:
        row["cpu_ms_per_answer"] = round(cpu_ms / len(run.ok), 1)
    return row


def _print(row: dict[str, Any]) -> None:
    keys = ("label", "ok", "errors", "answers_per_s", "ttfb_p50_ms", "ttfb_p95_ms", "first_token_p50_ms",
            "first_token_p95_ms", "first_token_p99_ms", "last_byte_p95_ms", "llm_first_token_p95_ms",
            "first_token_overhead_p95_ms", "cpu_ms_per_answer", "error_kinds")
    sys.stdout.write("  ".join(f"{k}={row[k]}" for k in keys if k in row and (k != "error_kinds" or row[k])) + "\n")
    sys.stdout.flush()


def _measure(stack: Stack, llm: str, kind: str, size: float, duration: float, offset: int) -> dict[str, Any]:
    """One load shape against the product and, with the same shape, against the fake LLM alone."""
    questions = load_corpus.questions(offset + 4000)[offset:]
    ours = answer_request(stack.url, stack.slug, stack.key, questions)
    direct = llm_request(llm)
    if kind == "burst":
        baseline = asyncio.run(burst(direct, int(size), token_event=LLM_TOKEN, label="llm"))
        cpu = stack.cpu_seconds()
        run = asyncio.run(burst(ours, int(size), token_event=ANSWER_TOKEN, label=f"{stack.profile} burst {size:g}"))
    else:
        baseline = asyncio.run(open_loop(direct, size, min(duration, 5), token_event=LLM_TOKEN, label="llm"))
        cpu = stack.cpu_seconds()
        run = asyncio.run(open_loop(ours, size, duration, token_event=ANSWER_TOKEN,
                                    label=f"{stack.profile} {size:g}/s"))
    row = _row(run, baseline, (stack.cpu_seconds() - cpu) * 1000)
    row.update(kind=kind, size=size, profile=stack.profile)
    _print(row)
    return row


def _profile(profile: str, args: argparse.Namespace, work: Path, llm: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    offset = 0
    with start_stack(profile, work / profile, llm=llm, pages=args.pages) as stack:
        for size in args.bursts:
            rows.append(_measure(stack, llm, "burst", size, 0, offset))
            offset += int(size)
        for rate in args.rates:
            rows.append(_measure(stack, llm, "rate", rate, args.duration, offset))
            offset += int(rate * args.duration)
        if args.reindex_pages:
            stack.add_large_source(args.reindex_pages)
            row = _measure(stack, llm, "rate", TARGET_RATE if not args.quick else args.rates[-1], args.duration,
                           offset)
            row["label"] += f" during a {args.reindex_pages}-page re-index"
            row["reindex_progress"] = stack.large_source_progress()
            rows.append(row)
    return rows


def _summary(rows: list[dict[str, Any]]) -> str:
    bursts = [r for r in rows if r["kind"] == "burst"]
    rates = [r for r in rows if r["kind"] == "rate"]
    worst_burst = max(bursts, key=lambda r: r["size"]) if bursts else {"size": 0, "errors": 0}
    top = max(rates, key=lambda r: r["size"]) if rates else None
    errors = sum(r["errors"] for r in rows)
    parts = [f"burst{worst_burst['size']:g}_errors={worst_burst['errors']}", f"errors={errors}"]
    if top is not None:
        overhead = top.get("first_token_overhead_p95_ms", float("nan"))
        baseline = top.get("llm_first_token_p95_ms", float("nan"))
        parts += [f"answers_per_s={top['answers_per_s']}", f"p95_first_token_overhead_ms={overhead}",
                  f"cpu_ms_per_answer={top.get('cpu_ms_per_answer', 'nan')}",
                  f"target=0_errors@{TARGET_BURST},>={TARGET_RATE:g}/s,overhead<={TARGET_OVERHEAD_MS:g}ms",
                  f"ratio={round(top['first_token_p95_ms'] / baseline, 2) if baseline else 'nan'}"]
    return " ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="Embedded only, small shapes (< 60 s).")
    parser.add_argument("--profile", choices=["embedded", "production", "both"], default="both")
    parser.add_argument("--bursts", type=float, nargs="*", default=[1, 10, 50, 100, 200])
    parser.add_argument("--rates", type=float, nargs="*", default=[5, 10, 20, 30, 40])
    parser.add_argument("--duration", type=float, default=20.0, help="Seconds of open-loop arrivals per rate.")
    parser.add_argument("--pages", type=int, default=40, help="Pages of the answering source.")
    parser.add_argument("--reindex-pages", type=int, default=1000, help="0: no load during a re-index.")
    parser.add_argument("--json", type=Path, help="Write every row here.")
    parser.add_argument("--work", type=Path, help="Keep processes' logs and data here (default: a temporary dir).")
    args = parser.parse_args()
    if args.quick:
        args.profile, args.bursts, args.rates, args.duration, args.pages = "embedded", [50], [10], 6.0, 12
        args.reindex_pages = 0
    profiles = ["embedded", "production"] if args.profile == "both" else [args.profile]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="openguru-load-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        with paced_llm(work) as llm:
            for profile in profiles:
                rows += _profile(profile, args, work, llm)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    sys.stdout.write(_summary(rows) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    started = time.monotonic()
    code = main()
    sys.stderr.write(f"bench/load.py finished in {time.monotonic() - started:.0f} s\n")
    sys.exit(code)
