"""A production-profile install as separate processes, for the operations tests: its own PostgreSQL database,
Redis database and collection prefix on the pass's servers, `manage.py` runs, a web server and a worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.parse
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from backend.core.sidecars import free_port, wait_for_port
from tests.support.product import Browser, eventually, sse_events
from tests.support.topology import redis_db_number

REPO = Path(__file__).resolve().parents[2]
# Variables of the test run that must not leak into the install's processes.
INHERITED_OUT = {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "MILVUS_URI", "DJANGO_SECRET_KEY",
                 "DJANGO_SECRET_KEY_FALLBACKS", "OPENGURU_ENCRYPTION_KEY", "OPENGURU_ENCRYPTION_KEY_FALLBACKS",
                 "OPENGURU_DATA_DIR", "OPENGURU_COLLECTION_PREFIX"}
ADMIN_PASSWORD = "the-production-admins-password"


def _with_database(url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def create_database(server_url: str, name: str = "") -> str:
    """A new, empty database on the pass's PostgreSQL (the URL's server); its URL."""
    name = name or f"ops_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(_with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return _with_database(server_url, name)


def drop_database(url: str) -> None:
    name = urllib.parse.urlsplit(url).path.lstrip("/")
    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Install:
    """One install on the production profile; `start()` runs its web server and worker until `stop()`."""

    work: Path
    env: dict[str, str]
    url: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @classmethod
    def create(cls, work: Path, *, redis_db: int, **extra: str) -> Install:
        """A fresh database (migrated, first admin created, as compose's migrate service does)."""
        work.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in INHERITED_OUT}
        redis = urllib.parse.urlsplit(os.environ["REDIS_URL"])._replace(path=f"/{redis_db_number(redis_db)}")
        env.update(
            DJANGO_SETTINGS_MODULE="backend.config.settings.production", DJANGO_SECRET_KEY=uuid.uuid4().hex * 2,
            DJANGO_SECURE_COOKIES="false", DATABASE_URL=create_database(os.environ["DATABASE_URL"]),
            REDIS_URL=urllib.parse.urlunsplit(redis), MILVUS_URI=os.environ["MILVUS_URI"],
            OPENGURU_DATA_DIR=str(work / "data"), OPENGURU_COLLECTION_PREFIX=f"ops{uuid.uuid4().hex[:8]}_",
            OPENGURU_ADMIN_PASSWORD=ADMIN_PASSWORD, PYTHONUNBUFFERED="1", **extra,
        )
        install = cls(work, env)
        install.manage("migrate", "--noinput")
        install.manage("ensure_admin")
        return install

    def manage(self, *args: str, check: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
        """`python manage.py …` in the install's environment (plus `extra` variables)."""
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={**self.env, **extra},
                              capture_output=True, text=True, timeout=300, check=False)
        if check and done.returncode:
            raise AssertionError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return done

    def start(self) -> None:
        """The compose services web (uvicorn) and worker (celery), each a process with its own log."""
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        web = [sys.executable, "-m", "uvicorn", "backend.config.asgi:application", "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1", "--no-proxy-headers"]
        worker = [sys.executable, "-m", "celery", "-A", "backend.config.celery_app", "worker", "--loglevel", "INFO",
                  "--concurrency", "1"]
        for name, argv in (("web", web), ("worker", worker)):
            with (self.work / f"{name}.log").open("ab") as log:
                self.processes.append(subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=log,
                                                       stderr=subprocess.STDOUT, start_new_session=True))
        wait_for_port("127.0.0.1", port, timeout=60, proc=self.processes[0], log_path=self.work / "web.log")
        eventually(lambda: "ready" in (self.work / "worker.log").read_text(), "the worker", timeout=60)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()

    def destroy(self) -> None:
        """Stop, then drop its database and its collections (the servers are shared by the whole pass)."""
        self.stop()
        drop_collections(self.env["MILVUS_URI"], self.env["OPENGURU_COLLECTION_PREFIX"])
        drop_database(self.env["DATABASE_URL"])


def drop_collections(uri: str, prefix: str) -> list[str]:
    from backend.adapters.vector_store.milvus import MilvusVectorStore

    store = MilvusVectorStore(uri=uri)
    names = [name for name in store.list_collections() if name.startswith(prefix)]
    for name in names:
        store.drop_collection(name)
    return names


def ask(base_url: str, slug: str, question: str) -> dict[str, Any]:
    """Ask on the guru page as an anonymous visitor; the answer's references and text."""
    visitor = Browser(base_url)
    visitor.get(f"/g/{slug}/")
    status, body = visitor.post_json(f"/g/{slug}/ask/", {"question": question}, referer=f"/g/{slug}/")
    assert status == 200, (status, body[:500])
    events = sse_events(body)
    assert not [data for kind, data in events if kind == "error"], events
    # The last `references` event is the final list (one is sent again each time the text cites a new source).
    cited = [data for kind, data in events if kind == "references"][-1]
    text = "".join(data["text"] for kind, data in events if kind == "delta")
    assert cited["references"] and text, events  # answered from the sources, not refused
    return {"references": cited["references"], "trust": cited["trust_score"], "text": text}
