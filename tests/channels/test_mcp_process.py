"""The MCP endpoint of the production web process: `uvicorn backend.config.asgi:application --workers 2`."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest

from tests.channels.mcp_support import call, http_session
from tests.support.web_process import web_process

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = """
from backend.api.services import api_key_create
from tests.factories import GuruFactory, UserFactory
keeper = UserFactory(username="keeper")
for slug in ("alpha", "beta"):
    GuruFactory(slug=slug, name=slug.title()).maintainers.add(keeper)
print(api_key_create(user=keeper, name="agent").raw)
"""


def test_every_worker_serves_mcp_statelessly_behind_the_key(tmp_path: Path) -> None:
    with web_process(tmp_path, workers=2) as web:
        key = web.manage("shell", "-c", SEED).strip().splitlines()[-1]
        endpoint = f"{web.url}/mcp/"

        async def scenario() -> None:
            # Each POST may reach either worker: the server keeps no MCP session in memory.
            async with http_session(endpoint, key) as session:
                for _ in range(4):
                    _, listed = await call(session, "list_gurus")
                    assert [g["slug"] for g in listed["gurus"]] == ["alpha", "beta"]
                is_error, found = await call(session, "search", guru="beta", query="anything")
                assert not is_error and found == {"guru": "beta", "results": []}  # nothing indexed yet

        anyio.run(scenario)
        refused = httpx2.post(endpoint, json={}, headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
        assert httpx2.get(f"{web.url}/mcpx").status_code == 404  # only /mcp and below are the MCP endpoint
