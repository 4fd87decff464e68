"""Start and stop `python -m backend.launcher` as a user does, and talk to it over HTTP like a browser."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.core.sidecars import free_port
from tests.support.install_cache import prefill

REPO = Path(__file__).resolve().parents[2]
# Settings the launcher must not inherit from a production-profile test run.
PROFILE_VARIABLES = {"DATABASE_URL", "REDIS_URL", "MILVUS_URI", "DJANGO_SETTINGS_MODULE"}


@dataclass
class Product:
    """A running launcher: its URL, the admin login it printed (empty on a later start) and its data dir."""

    url: str
    username: str
    password: str
    data_dir: Path
    process: subprocess.Popen[str]
    output: Path


def environment(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROFILE_VARIABLES}
    env.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    return env


def launch(data_dir: Path, *, timeout: float = 180, env: Mapping[str, str] | None = None,
           new_install: bool = False) -> Product:
    """Start the launcher on a free port and wait for its banner (it prints "Stop:" when everything runs).

    `env` adds variables, e.g. an LLM provider pointed at a fake server. A data dir without a database starts
    from a migrated empty one and collected static files (tests/support/install_cache.py) unless `new_install`.
    """
    if not new_install:
        prefill(data_dir, environment)
    port = free_port()
    output = data_dir.parent / f"launcher-{port}.out"
    with output.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "backend.launcher", "--port", str(port)],
            cwd=REPO, env={**environment(data_dir), **(env or {})}, stdout=sink, stderr=subprocess.STDOUT, text=True,
        )
    deadline = time.monotonic() + timeout
    while "Stop:" not in (text := output.read_text()):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"launcher did not come up (exit {process.poll()}):\n{text}")
        time.sleep(0.1)
    creds = dict(re.findall(r"(username|password): (\S+)", text))
    return Product(f"http://localhost:{port}", creds.get("username", ""), creds.get("password", ""),
                   data_dir, process, output)


def stop(product: Product, *, timeout: float = 60) -> int:
    """Ctrl-C: SIGINT the launcher and wait for it to stop everything it started."""
    if product.process.poll() is None:
        product.process.send_signal(signal.SIGINT)
    return product.process.wait(timeout=timeout)


def child_pid(product: Product, marker: bytes) -> int | None:
    """The pid of the launcher's live direct child whose command line holds `marker` (b"worker", b"uvicorn")."""
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            stat = stat_path.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat_path.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == product.process.pid and marker in cmdline and stat[0] != "Z":
            return int(stat_path.parent.name)
    return None


def eventually(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Poll an observable condition until it holds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


def summaries_settled(product: Product) -> bool:
    """Whether no source of the embedded product has a summary tree queued or being built.

    A test that scripts the fake LLM's next replies waits for this first: the worker's summariser calls the
    same fake after each index run and would take the replies meant for the answer.
    """
    row = query(product, "SELECT COUNT(*) FROM sources_datasource WHERE summary_state IN ('QUEUED', 'RUNNING')"
                         " OR (status = 'INDEXED' AND summary_state = '')")
    return row is not None and int(row[0]) == 0


def query(product: Product, sql: str, *params: object) -> tuple[Any, ...] | None:
    """One row of the running product's SQLite database, read beside it (WAL lets readers in during writes).

    Waiting on a row this way, rather than through `./openguru manage shell`, spares a Python process loading
    the project (a CPU-second or two) at every poll."""
    import sqlite3

    with sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30) as db:
        row: tuple[Any, ...] | None = db.execute(sql, params).fetchone()
    return row


def collection_ready(product: Product, slug: str) -> bool:
    """Whether the guru's vector collection is READY."""
    row = query(product, "SELECT c.status FROM gurus_vectorcollection c JOIN gurus_guru g ON g.id = c.guru_id"
                         " WHERE g.slug = ?", slug)
    return row is not None and row[0] == "READY"


def manage_run(product: Product, *args: str) -> subprocess.CompletedProcess[str]:
    """`./openguru manage …` as a user runs it beside `start` (through the sidecar named in run.env), whatever
    its exit status."""
    env = environment(product.data_dir)
    env.update(line.split("=", 1) for line in (product.data_dir / "run.env").read_text().split())
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def manage(product: Product, *args: str) -> str:
    """`./openguru manage …` beside `start`, which must succeed; its output."""
    result = manage_run(product, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


class Browser:
    """A cookie-keeping HTTP client that submits Django forms and posts JSON with the CSRF token."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return str(response.read().decode())

    def submit(self, path: str, fields: dict[str, str], *, action: str = "") -> str:
        """Submit a form of the page at `path` (to `action`, when the form posts elsewhere)."""
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', self.get(path))
        assert token, f"no CSRF token on {path}"
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        request = urllib.request.Request(self.base + (action or path), data=body, headers={"Referer": self.base + path})
        with self.opener.open(request, timeout=60) as response:
            return str(response.read().decode())

    def post_json(self, path: str, payload: object, *, referer: str) -> tuple[int, bytes]:
        """POST JSON from the page at `referer` (whose GET set the CSRF cookie); any status is returned."""
        token = next((c.value for c in self.cookies if c.name == "csrftoken"), "")
        request = urllib.request.Request(
            self.base + path, data=json.dumps(payload).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-CSRFToken": token or "", "Referer": self.base + referer})
        try:
            with self.opener.open(request, timeout=120) as response:
                return int(response.status), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def sse_events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) pairs of a text/event-stream body."""
    events = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields.get("data", "null"))))
    return events


def ask_on_guru_page(product: Product, slug: str, question: str) -> list[tuple[str, dict[str, Any]]]:
    """Ask as an anonymous visitor of /g/<slug>/ does; the SSE events of the answer."""
    visitor = Browser(product.url)
    visitor.get(f"/g/{slug}/")
    status, body = visitor.post_json(f"/g/{slug}/ask/", {"question": question}, referer=f"/g/{slug}/")
    assert status == 200, (status, body[:500])
    return sse_events(body)


def create_guru(product: Product, slug: str, name: str, domain: str) -> Browser:
    """Log in as the launcher's administrator, create a guru in the dashboard and wait for its collection; the
    logged-in browser."""
    browser = Browser(product.url)
    browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    browser.submit("/dashboard/gurus/new/", {"slug": slug, "name": name, "language": "en", "domain_knowledge": domain,
                                             "base_color": "#1f6feb", "active": "on"})
    eventually(lambda: 'class="badge ok">ready<' in browser.get("/"), "collection")
    return browser
