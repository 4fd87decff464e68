"""README command 1 as a new user runs it: start, log in, create/rename/delete a guru in the admin."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from backend.core.sidecars import free_port
from tests.fakes.pdfs import write_pdf

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@dataclass
class Product:
    """A running `python -m backend.launcher` and what it printed."""

    url: str
    username: str
    password: str
    data_dir: Path
    process: subprocess.Popen[str]


class Browser:
    """A cookie-keeping HTTP client that submits Django forms with their CSRF token."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()

    def submit(self, path: str, fields: dict[str, str]) -> str:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', self.get(path))
        assert token, f"no CSRF token on {path}"
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        request = urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base + path})
        with self.opener.open(request, timeout=60) as response:
            return response.read().decode()


def _read_banner(process: subprocess.Popen[str], output: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while "Stop:" not in (text := output.read_text()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"launcher did not come up (exit {process.poll()}):\n{text}")
        time.sleep(0.1)
    return text


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    data_dir = tmp_path_factory.mktemp("embedded") / "data"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "MILVUS_URI"}}
    env.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    output = data_dir.parent / "launcher.out"
    with output.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "backend.launcher", "--port", str(port)],
            cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True,
        )
    banner = _read_banner(process, output, timeout=120)
    creds = dict(re.findall(r"(username|password): (\S+)", banner))
    yield Product(f"http://localhost:{port}", creds["username"], creds["password"], data_dir, process)
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)


def _eventually(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


def _manage(product: Product, *args: str) -> str:
    """`./openguru manage …` as a user runs it beside `start`: through the sidecar named in run.env."""
    env = dict(os.environ, OPENGURU_DATA_DIR=str(product.data_dir),
               DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    env.update(line.split("=", 1) for line in (product.data_dir / "run.env").read_text().split())
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _collections(product: Product) -> str:
    return _manage(product, "collections")


def test_new_user_journey(product: Product) -> None:
    browser = Browser(product.url)
    assert "Log in" in browser.get("/")
    home = browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    assert "All gurus" in home  # the first account is the administrator

    browser.submit("/dashboard/gurus/new/", {
        "slug": "celery-guru", "name": "Celery Guru", "domain_knowledge": "Celery task queue",
        "base_color": "#1f6feb", "language": "en", "active": "on",
    })
    _eventually(lambda: 'class="badge ok">ready<' in browser.get("/"), "collection")
    assert "guru_celery_guru" in browser.get("/dashboard/g/celery-guru/settings/")
    assert re.search(r"celery-guru\s+guru_celery_guru\s+384\s+0\s+ok", _collections(product))

    # The worker process indexes with the real local embedder while the command watches progress.
    pdf = write_pdf(product.data_dir.parent / "manual.pdf",
                    [[f"Line {i}: the visibility timeout redelivers unacknowledged tasks." for i in range(30)]])
    out = _manage(product, "add_source", "celery-guru", str(pdf))
    chunks = int(re.search(r"Indexed (\d+) chunks from manual.pdf", out).group(1))  # type: ignore[union-attr]
    assert chunks > 0
    assert re.search(rf"celery-guru\s+guru_celery_guru\s+384\s+{chunks}\s+ok", _collections(product))

    guru_id = re.search(r"/admin/gurus/guru/(\d+)/change/", browser.get("/admin/gurus/guru/")).group(1)
    change = f"/admin/gurus/guru/{guru_id}/change/"
    browser.submit(change, {"slug": "celery-docs", "name": "Celery Guru", "domain_knowledge": "Celery",
                            "base_color": "#1f6feb", "language": "en", "active": "on", "_save": "Save"})
    _eventually(lambda: "guru_celery_docs" in _collections(product), "rename")
    assert "guru_celery_guru " not in _collections(product)
    assert f"guru_celery_docs: {chunks} chunks, 384-d, loaded" in browser.get(change)

    browser.submit(f"/admin/gurus/guru/{guru_id}/delete/", {"post": "yes"})
    _eventually(lambda: "No gurus yet" in _collections(product), "drop")


def test_stops_cleanly_on_ctrl_c(product: Product) -> None:
    port = int(product.url.rsplit(":", 1)[1])
    product.process.send_signal(signal.SIGINT)
    assert product.process.wait(timeout=60) == 0
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    assert not (product.data_dir / "run.env").exists()
