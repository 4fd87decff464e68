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


# Tests that share a package-scoped deployment (tests/e2e/conftest.py: `topology`) run in one test process: split
# over several, each would start a topology of its own.
SHARED_PACKAGE_FIXTURES = ("topology",)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups set here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start real processes first, each module's in one group (`--dist loadgroup`, ./openguru test).

    The scheduler hands out groups, then single tests, in this order to whichever test process is free: the long
    tests overlap each other and the many short ones fill the gaps at the end, instead of one long test running
    alone. A group keeps a module's slow tests (which often share a module-scoped product) on one process.
    """
    grouped = {item.nodeid for item in items if _group(item)}
    items.sort(key=lambda item: item.nodeid not in grouped)


def _group(item: pytest.Item) -> bool:
    """Mark the item's xdist group, if it has one; whether it has."""
    fixtures = getattr(item, "fixturenames", ())
    if any(name in fixtures for name in SHARED_PACKAGE_FIXTURES):
        item.add_marker(pytest.mark.xdist_group(f"package:{item.path.parent}"))
    elif item.get_closest_marker("slow") is not None:
        item.add_marker(pytest.mark.xdist_group(f"module:{item.path}"))
    else:
        return False
    return True
