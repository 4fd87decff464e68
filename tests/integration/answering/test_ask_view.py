"""The public ask endpoint: SSE framing and headers, input bounds, rate limits, private gurus."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile]


def parse_sse(body: bytes) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    events = []
    for block in body.decode().split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.split("\n"))
            events.append((lines["event"], json.loads(lines["data"])))
    return events


@async_to_sync
async def post(path: str, payload: object, **extra: str) -> tuple[int, dict[str, str], bytes]:
    client = AsyncClient(enforce_csrf_checks=False)
    response = await client.post(path, payload, content_type="application/json", **extra)
    if not response.streaming:
        return response.status_code, dict(response.headers), response.content
    return response.status_code, dict(response.headers), b"".join([c async for c in response.streaming_content])


@pytest.fixture
def guru() -> Guru:
    return GuruFactory(slug="docs", name="Docs Guru")


def test_streams_server_sent_events(guru: Guru) -> None:
    status, headers, body = post("/g/docs/ask/", {"question": "hello there"})
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    assert headers["Cache-Control"] == "no-cache" and headers["X-Accel-Buffering"] == "no"
    events = parse_sse(body)
    assert [name for name, _ in events][0] == "question" and events[-1][0] == "done"
    assert events[0][1]["session_id"]


def test_questions_about_nothing_indexed_are_refused(guru: Guru) -> None:
    events = parse_sse(post("/g/docs/ask/", {"question": "How do I configure the broker?"})[2])
    assert events[-1][1]["out_of_context"] is True


@pytest.mark.parametrize(("payload", "code"), [
    ({}, "invalid_question"), ({"question": ""}, "invalid_question"), ({"question": 42}, "invalid_question"),
    ({"question": "x" * 2001}, "invalid_question"), ({"question": "hi", "session_id": 5}, "invalid_session"),
])
def test_bad_input_is_a_400_with_a_code(guru: Guru, payload: object, code: str) -> None:
    status, _, body = post("/g/docs/ask/", payload)
    assert status == 400 and json.loads(body)["code"] == code


def test_oversized_bodies_are_refused(guru: Guru) -> None:
    status, _, body = post("/g/docs/ask/", {"question": "hi", "padding": "x" * 20_000})
    assert status == 413


def test_rate_limit_answers_429_with_retry_after(guru: Guru, settings: SettingsWrapper) -> None:
    from django.core.cache import cache

    cache.clear()  # counters outlive transactional tests: the cache table is not a model table
    settings.OPENGURU_WEB_RATE_LIMIT = 1
    # Three requests against a limit of one per minute: even if a minute boundary falls between two
    # of them, at least one is refused.
    replies = [post("/g/docs/ask/", {"question": "hello"}) for _ in range(3)]
    assert replies[0][0] == 200
    refused = [r for r in replies if r[0] == 429]
    assert refused and int(refused[0][1]["Retry-After"]) >= 1 and json.loads(refused[0][2])["code"] == "rate_limited"


def test_private_gurus_are_for_their_maintainers(client: Client) -> None:
    guru = GuruFactory(slug="secret", private=True)
    assert client.get("/g/secret/").status_code == 403
    assert post("/g/secret/ask/", {"question": "hi"})[0] == 403
    maintainer = UserFactory(username="keeper")
    guru.maintainers.add(maintainer)
    client.force_login(maintainer)
    assert client.get("/g/secret/").status_code == 200


def test_unknown_and_inactive_gurus_are_404(client: Client) -> None:
    GuruFactory(slug="sleeping", active=False)
    assert client.get("/g/nobody/").status_code == 404
    assert client.get("/g/sleeping/").status_code == 404
