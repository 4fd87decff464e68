"""`manage.py mcp <guru>` (what `./openguru manage mcp` runs) as a real process, driven by the SDK's stdio client."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from django.db import connection
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.core.sidecars import start_milvus_lite
from tests.channels.mcp_support import assert_answers_and_searches, call
from tests.integration.answering.answer_support import make_indexed_guru

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def shared_milvus(tmp_path: Path, settings: SettingsWrapper) -> Iterator[dict[str, str]]:
    """A Milvus both this process and the command's process reach (a Milvus Lite file takes one process),
    with this test's collection prefix; yields the command's environment for it."""
    uri = os.environ.get("MILVUS_URI")
    sidecar = None if uri else start_milvus_lite(data_dir=tmp_path / "milvus.db", log_dir=tmp_path)
    uri = uri or (sidecar.url if sidecar is not None else "")
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": uri, "TOKEN": ""}
    settings.OPENGURU_COLLECTION_PREFIX = prefix
    try:
        yield {"OPENGURU_VECTOR_STORE": "milvus", "MILVUS_URI": uri, "OPENGURU_COLLECTION_PREFIX": prefix}
    finally:
        if sidecar is not None:
            sidecar.stop()


def _command_env(tmp_path: Path, vectors: dict[str, str]) -> dict[str, str]:
    """The production settings on this test's database and Milvus, with the test profile's models."""
    db = connection.settings_dict
    database = (f"sqlite:///{db['NAME']}" if connection.vendor == "sqlite"
                else f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}")
    env = {name: os.environ[name] for name in ("PATH", "HOME", "REDIS_URL") if name in os.environ}
    return {**env, **vectors, "DJANGO_SETTINGS_MODULE": "backend.config.settings.base", "DATABASE_URL": database,
            "OPENGURU_DATA_DIR": str(tmp_path / "data"), "OPENGURU_EMBEDDER": "hashing",
            "OPENGURU_EMBEDDING_DIMENSION": "384", "OPENGURU_LLM_PROVIDER": "offline", "PYTHONUNBUFFERED": "1"}


def test_the_stdio_server_answers_and_searches_for_its_one_guru(
    tmp_path: Path, shared_milvus: dict[str, str], django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    make_indexed_guru(django_capture_on_commit_callbacks)
    env = _command_env(tmp_path, shared_milvus)
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "docs"], env=env, cwd=REPO)

    async def scenario() -> None:
        with (tmp_path / "mcp.stderr").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                _, listed = await call(session, "list_gurus")
                assert [g["slug"] for g in listed["gurus"]] == ["docs"]
                # No host to link to over stdio: question_url is the path on the instance.
                await assert_answers_and_searches(session, link_base="", guru=None)

    anyio.run(scenario)

    unknown = subprocess.run([sys.executable, "manage.py", "mcp", "no-such-guru"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=120, check=False)
    assert unknown.returncode != 0 and unknown.stdout == ""
    assert "No active guru 'no-such-guru'" in unknown.stderr
