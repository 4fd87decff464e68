"""Real processes around the broker: publishers and a Celery worker on the product's settings."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def broker_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The embedded broker (unless REDIS_URL is passed) under `data_dir`, as the launcher sets it."""
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL", "MILVUS_URI"}}
    env.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base",
               PYTHONUNBUFFERED="1", **extra)
    return env


def start_worker(env: dict[str, str], log: Path, *, app: str = "tests.support.stress_app",
                 concurrency: int = 2) -> subprocess.Popen[bytes]:
    """A prefork worker in its own process group (so a test can SIGKILL the whole worker)."""
    cmd = [sys.executable, "-m", "celery", "-A", app, "worker", "--loglevel", "INFO",
           "--concurrency", str(concurrency), "--without-mingle", "--without-gossip"]
    with log.open("ab") as sink:
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker and its pool children at once, as the OOM killer or a power cut would."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(proc)


PUBLISH = """
import sys
from tests.support.stress_app import record
prefix, count, out, delay, pad = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
for i in range(count):
    record.delay(f"{prefix}-{i}", out, delay, "x" * pad)
"""


def publish(
    env: dict[str, str], *, prefix: str, count: int, out: Path, delay: float = 0.0, pad: int = 0
) -> subprocess.Popen[bytes]:
    """A separate process that publishes `count` record tasks keyed `<prefix>-<i>` (`pad` bytes each)."""
    argv = [sys.executable, "-c", PUBLISH, prefix, str(count), str(out), str(delay), str(pad)]
    return subprocess.Popen(argv, cwd=REPO, env=env)


def recorded(out: Path) -> list[str]:
    return out.read_text().split() if out.exists() else []


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str, poll: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(poll)
