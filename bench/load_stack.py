"""The product under load for bench/load.py: started, seeded with a guru, a key and an indexed site."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench import load_corpus

TICKS = os.sysconf("SC_CLK_TCK")
SEED = """
from django.contrib.auth.models import User
from backend.api.services import api_key_create
from backend.gurus.services import guru_create
user = User.objects.filter(is_superuser=True).order_by("pk").first()
guru = guru_create(user=user, slug="bench", name="Bench", domain_knowledge="the Bench platform's operations guide")
print("KEY=" + api_key_create(user=user, name="load", guru=guru, rate_limit_per_minute=10**7).raw)
"""
PROGRESS = """
from backend.sources.models import DataSource
s = DataSource.objects.get(url__endswith="big-sitemap.xml")
print(s.status, s.chunk_count, "chunks")
"""


@dataclass
class Stack:
    """A running product: where to ask, with what, and how to read its processes' CPU time."""

    profile: str
    url: str
    manage: Callable[..., str]
    pids: Callable[[], list[int]]
    site: Path
    site_url: str
    slug: str = "bench"
    key: str = ""

    def cpu_seconds(self) -> float:
        """User + system CPU of every process of the product (its supervisor and all descendants)."""
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / TICKS

    def seed(self, pages: int) -> None:
        """A guru, an API key without a practical rate limit, and `pages` indexed pages."""
        self.key = self.manage("shell", "-c", SEED).split("KEY=", 1)[1].strip()
        load_corpus.write_site(self.site, pages)
        url = load_corpus.sitemap(self.site, self.site_url, pages)
        self.manage("add_source", self.slug, url, "--mode", "sitemap", "--max-pages", str(pages), "--timeout", "600")

    def add_large_source(self, pages: int) -> None:
        """A second, large site, queued for indexing (not waited for)."""
        load_corpus.write_site(self.site, pages, prefix="big")
        url = load_corpus.sitemap(self.site, self.site_url, pages, prefix="big")
        self.manage("add_source", self.slug, url, "--mode", "sitemap", "--max-pages", str(pages), "--no-wait")

    def large_source_progress(self) -> str:
        return self.manage("shell", "-c", PROGRESS).strip().splitlines()[-1]  # after the shell's banner


def descendants(root: int) -> list[int]:
    """`root` and every process below it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _llm_env(llm: str) -> dict[str, str]:
    return {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": f"{llm}/v1", "OPENGURU_CHAT_MODEL": "paced",
            "OPENGURU_LLM_PROVIDER": "openai", "OPENGURU_WEB_RATE_LIMIT": "10000000"}


@contextmanager
def _embedded(work: Path, env: dict[str, str], site: Path, site_url: str) -> Iterator[Stack]:
    from tests.support.product import launch, manage, stop

    product = launch(work / "data", env=env, timeout=300)
    try:
        yield Stack("embedded", product.url.replace("localhost", "127.0.0.1"),
                    lambda *a: manage(product, *a), lambda: descendants(product.process.pid), site, site_url)
    finally:
        stop(product)


@contextmanager
def _production(work: Path, env: dict[str, str], site: Path, site_url: str) -> Iterator[Stack]:
    from tests.support.topology import running_topology

    with running_topology(work, env=env) as topology:
        yield Stack("production", topology.url, topology.manage, topology.pids, site, site_url)


@contextmanager
def start_stack(profile: str, work: Path, *, llm: str, pages: int) -> Iterator[Stack]:
    """The profile's product, seeded and ready for questions."""
    work.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        site = work / "site"
        site.mkdir()
        server, site_url = load_corpus.serve(site, work / "site.log")
        stack.callback(_stop, server)
        env = {**_llm_env(llm), "OPENGURU_FETCH_ALLOWLIST": site_url.removeprefix("http://")}
        start = _embedded if profile == "embedded" else _production
        product = stack.enter_context(start(work, env, site, site_url))
        product.seed(pages)
        yield product


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=10)
