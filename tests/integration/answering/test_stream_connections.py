"""Open answer streams hold no database connection while they wait on the model; idle streams send heartbeats."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.db import connection
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ReplyScript, ScriptedReply
from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, grades, make_indexed_guru

pytestmark = [pytest.mark.production_profile, pytest.mark.django_db(transaction=True)]
STREAMS = 12


def _open_connections() -> int:
    """Connections this process has open to the test database, other than the test thread's own."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
            return int(cursor.fetchone()[0]) - 1
    connection.close()
    database = str(connection.settings_dict["NAME"])
    return sum(1 for fd in Path("/proc/self/fd").iterdir() if _target(fd) == database)


def _target(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:
        return ""


@pytest.fixture
def slow_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    """Every answer streams 40 pieces 0.1 s apart: seconds in which a stream only waits on the model."""
    openai_server.script = ReplyScript(default=ScriptedReply(text="Tasks are acknowledged late [1]. " * 8,
                                                             chunks=40, chunk_delay=0.1, stream=True))
    openai_server.script.push(*(grades(0.9) for _ in range(STREAMS)))
    settings.OPENGURU_LLM = openai_server.llm_settings()
    settings.OPENGURU_WEB_RATE_LIMIT = 0
    yield openai_server


def _stream(url: str, headers: dict[str, str], body: dict[str, str], streaming: threading.Barrier,
            results: list[str]) -> None:
    """Ask, report once the first token arrived, then read to the end."""
    seen, reported = b"", False
    with httpx.Client(timeout=60, trust_env=False) as client, \
            client.stream("POST", url, json=body, headers=headers) as response:
        for chunk in response.iter_raw():
            seen += chunk
            if not reported and b"event: delta" in seen:
                reported = True
                streaming.wait(timeout=60)
    if not reported:
        streaming.abort()  # the test fails at once, showing this body
    results.append(f"HTTP {response.status_code}: {seen.decode()}")


def _page_headers(base: str, slug: str, client: httpx.Client) -> dict[str, str]:
    client.get(f"{base}/g/{slug}/")
    return {"X-CSRFToken": client.cookies["csrftoken"], "Referer": f"{base}/g/{slug}/",
            "Cookie": f"csrftoken={client.cookies['csrftoken']}"}


def test_streams_waiting_on_the_model_hold_no_database_connection(
    slow_llm: OpenAIFakeServer, asgi_live_server: str,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru: Guru = make_indexed_guru(django_capture_on_commit_callbacks)
    key = api_key_create(user=guru.maintainers.get(), name="load", guru=guru, rate_limit_per_minute=1000).raw
    with httpx.Client(trust_env=False) as client:
        page = _page_headers(asgi_live_server, guru.slug, client)
    api = {"X-API-KEY": key, "Accept": "text/event-stream"}
    # Half through the guru page (an async view), half through the API (a sync view): both keep none.
    targets = [(f"{asgi_live_server}/g/{guru.slug}/ask/", page) if n % 2 else
               (f"{asgi_live_server}/api/v1/{guru.slug}/answer/", api) for n in range(STREAMS)]
    streaming, results = threading.Barrier(STREAMS + 1), []
    threads = [threading.Thread(target=_stream, args=(url, headers, {"question": f"{QUESTION} ({n})"}, streaming,
                                                       results)) for n, (url, headers) in enumerate(targets)]
    for thread in threads:
        thread.start()
    try:
        streaming.wait(timeout=60)  # every stream has its first token and is still streaming
    except threading.BrokenBarrierError:
        for thread in threads:
            thread.join(timeout=60)
        raise AssertionError(f"not every stream got a first token: {results}") from None
    held = _open_connections()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == STREAMS and all("event: done" in body for body in results), results
    assert held <= 2, f"{held} database connections held by {STREAMS} streams waiting on the model"


def test_a_stream_with_nothing_to_say_sends_heartbeats(
    settings: SettingsWrapper, openai_server: OpenAIFakeServer, asgi_live_server: str,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru: Guru = make_indexed_guru(django_capture_on_commit_callbacks)
    key = api_key_create(user=guru.maintainers.get(), name="slow", guru=guru).raw
    # The grade takes 2.5 s: with a 1 s heartbeat, at least two comments come before the answer's text.
    openai_server.script.push(ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(10)]},
                                            delay=2.5))
    settings.OPENGURU_LLM = openai_server.llm_settings()
    settings.OPENGURU_STREAM_HEARTBEAT = 1
    with httpx.Client(timeout=60, trust_env=False) as client:
        response = client.post(f"{asgi_live_server}/api/v1/{guru.slug}/answer/", json={"question": QUESTION},
                               headers={"X-API-KEY": key, "Accept": "text/event-stream"})
    body = response.text
    before_text = body.split("event: delta", 1)[0]
    assert before_text.count(": keep-alive\n\n") >= 2, body[:800]
    assert "event: done" in body
