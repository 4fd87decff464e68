"""A web process with a small PostgreSQL pool answers more streams than it has connections; when none is free
in time the client gets 503 `busy` with Retry-After, never an empty 200 or an HTML 500."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.db import OperationalError, connection
from django.test import RequestFactory

from backend.core.busy import DatabaseBusyMiddleware
from tests.support.web_process import WebProcess, web_process

pytestmark = [pytest.mark.django_db(transaction=True)]
STREAMS = 12
SEED = """
from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.factories import UserFactory
user = UserFactory(username="pooled")
Guru.objects.create(slug="pooled", name="Pooled").maintainers.add(user)
print(api_key_create(user=user, name="pooled", rate_limit_per_minute=1000).raw)
"""


@pytest.fixture
def pooled_web(tmp_path: Path) -> Iterator[WebProcess]:
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's (production profile)")
    # Two connections for one process: each request needs one in its view and one in its answer thread.
    env = {"DATABASE_POOL_MAX_SIZE": "2", "DATABASE_POOL_TIMEOUT": "10"}
    with web_process(tmp_path / "web", workers=1, extra_env=env) as served:
        yield served


def _ask(url: str, key: str, start: threading.Barrier, n: int) -> tuple[int, str]:
    with httpx.Client(timeout=60, trust_env=False) as client:
        start.wait(timeout=30)
        response = client.post(url, json={"question": f"How are tasks retried, case {n}?"},
                               headers={"X-API-KEY": key, "Accept": "text/event-stream"})
        return response.status_code, response.text


@pytest.mark.production_profile
@pytest.mark.slow
def test_a_two_connection_pool_serves_twelve_simultaneous_streams(pooled_web: WebProcess) -> None:
    key = pooled_web.manage("shell", "-c", SEED).strip().splitlines()[-1]
    url = f"{pooled_web.url}/api/v1/pooled/answer/"
    start = threading.Barrier(STREAMS)
    with ThreadPoolExecutor(max_workers=STREAMS) as pool:
        results = list(pool.map(lambda n: _ask(url, key, start, n), range(STREAMS)))
    # Before views gave their connection back ahead of the pipeline, two requests held both connections
    # while their pipelines waited for one: the rest timed out as HTML 500s.
    assert [status for status, _ in results] == [200] * STREAMS, results[:3]
    assert all("event: done" in body for _, body in results)


def test_a_database_out_of_connections_is_a_503_busy_with_retry_after() -> None:
    request = RequestFactory().post("/api/v1/docs/answer/", HTTP_ACCEPT="text/event-stream")
    response = DatabaseBusyMiddleware(lambda r: None).process_exception(  # type: ignore[arg-type,return-value]
        request, OperationalError("couldn't get a connection after 10.00 sec"))
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == "5"
    body = json.loads(response.content)
    assert body["code"] == "busy" and "connection" not in body["msg"] and body["error_id"]
    page = RequestFactory().get("/dashboard/", HTTP_ACCEPT="text/html")
    html = DatabaseBusyMiddleware(lambda r: None).process_exception(  # type: ignore[arg-type,return-value]
        page, OperationalError("too many clients"))
    assert html is not None and html.status_code == 503 and b"busy" in html.content
