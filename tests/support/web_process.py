"""A real uvicorn web process (the production app and flags) on a real database, for concurrency tests.

On the embedded default it gets its own SQLite file in WAL mode, as `./openguru start` runs: the test
process's in-memory database cannot be shared with another process (and its shared-cache mode answers
concurrent writers "table is locked" at once, which no deployment does). On the production profile it
uses the test PostgreSQL database and Redis, so rows made by the test are visible to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.db import connection

from backend.core.sidecars import free_port, wait_for_port

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class WebProcess:
    """A running web process: its base URL and the environment its management commands need."""

    url: str
    env: dict[str, str]

    def manage(self, *args: str) -> str:
        """Run manage.py against the web process's database; its stdout."""
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode:
            raise AssertionError(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout


def database_env(data_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for processes sharing the web process's database (migrated on SQLite)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    env = _environment(data_dir, extra or {})
    if connection.vendor == "sqlite":
        WebProcess("", env).manage("migrate", "--noinput")
    return env


def _environment(data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DJANGO_SETTINGS_MODULE="backend.config.settings.test", OPENGURU_DATA_DIR=str(data_dir),
               PYTHONUNBUFFERED="1", **extra)
    if connection.vendor == "postgresql":
        db = connection.settings_dict
        env["DATABASE_URL"] = f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return env


@contextmanager
def web_process(data_dir: Path, *, workers: int = 2, extra_env: dict[str, str] | None = None) -> Iterator[WebProcess]:
    """Migrate (SQLite only: PostgreSQL is the migrated test database) and serve until the block ends."""
    env = database_env(data_dir, extra_env)
    port = free_port()
    web = WebProcess(f"http://127.0.0.1:{port}", env)
    log_path = data_dir / "web.log"
    argv = [sys.executable, "-m", "uvicorn", "backend.config.asgi:application", "--host", "127.0.0.1",
            "--port", str(port), "--workers", str(workers), "--no-proxy-headers"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port("127.0.0.1", port, timeout=STARTUP_TIMEOUT_S, proc=process, log_path=log_path)
        yield web
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
