"""Shared fixtures: isolated media root, fresh in-memory fakes, and real Milvus (Lite or server)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.vector_store.fake import InMemoryVectorStore
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.core import llm_config
from backend.pipeline import speculation

pytest_plugins = ["tests.fakes.openai_server", "tests.fakes.gemini_server", "tests.fakes.tei_server",
                  "tests.fakes.youtube_server", "tests.fakes.site_server", "tests.fakes.firecrawl_server",
                  "tests.fakes.slack_server", "tests.fakes.discord_server",
                  "tests.support.browser", "tests.support.asgi_server", "tests.support.celery_worker",
                  "tests.browser.widget_fixtures", "tests.support.git_servers", "tests.dashboard.slack_support",
                  "tests.dashboard.discord_support"]


@pytest.fixture(autouse=True)
def _isolated_state(settings: SettingsWrapper, tmp_path: Path) -> Iterator[None]:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    InMemoryVectorStore.reset()
    speculation.forget()  # each test starts predicting the grade from the reranker's rule
    llm_config.forget()  # the saved chat provider of a rolled-back test must not linger for a few seconds
    yield
    InMemoryVectorStore.reset()


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """MILVUS_URI when the run provides a server (production profile), else a Milvus Lite dir."""
    return os.environ.get("MILVUS_URI") or str(tmp_path_factory.mktemp("milvus") / "milvus.db")


@pytest.fixture
def milvus(settings: SettingsWrapper, milvus_uri: str) -> Iterator[MilvusVectorStore]:
    """Point the registry at real Milvus with a per-test collection prefix; drop what the test made."""
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": milvus_uri, "TOKEN": ""}
    settings.OPENGURU_COLLECTION_PREFIX = prefix
    store = MilvusVectorStore(uri=milvus_uri)
    yield store
    for name in store.list_collections():
        if name.startswith(prefix):
            store.drop_collection(name)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with tests that start real processes at the head of every test process's share (./openguru test).

    `--dist worksteal` first gives each of the N test processes a contiguous 1/N of this order, then lets idle
    ones take the tail of a busy one's queue. So the modules with `slow` tests are spread over the N shares and
    put at the head of each (kept whole: their tests may share a module-scoped product, and some check what an
    earlier test of the module did); the long tests then overlap each other and the short ones, stolen from
    the tails, fill the gaps at the end instead of one long test running alone.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    slow_paths = {item.path for item in items if item.get_closest_marker("slow") is not None}
    modules: dict[Path, list[pytest.Item]] = {}
    for item in items:
        if item.path in slow_paths:
            modules.setdefault(item.path, []).append(item)
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    slow_counts = [0] * workers
    for module in modules.values():  # the share with the fewest slow tests so far takes the next module
        share = slow_counts.index(min(slow_counts))
        shares[share] += module
        slow_counts[share] += sum(1 for item in module if item.get_closest_marker("slow") is not None)
    rest = [item for item in items if item.path not in slow_paths]
    ordered: list[pytest.Item] = []
    for index, share in enumerate(shares):
        # worksteal's first split: each process in turn gets what remains divided by the processes left.
        size = (len(items) - len(ordered)) // (workers - index)
        take = max(0, size - len(share))
        ordered += share + rest[:take]
        rest = rest[take:]
    items[:] = ordered + rest
