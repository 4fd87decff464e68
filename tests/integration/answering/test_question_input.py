"""Bad questions on every channel (guru page, widget, API): a clear 4xx with the channel's error shape, never a 500
and never a stored question (issue #12 item 11 and the question bad-input row)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from backend.answering.models import Question
from backend.api.services import api_key_create
from backend.gurus.models import Guru
from backend.widget.services import widget_id_create
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True),  # streams run in their own thread and connection
              pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")]

ORIGIN = "https://docs.example.com"
BAD_BODIES: dict[str, bytes] = {
    "empty question": b'{"question": ""}',
    "blank question": b'{"question": "   \\n\\t "}',
    "no question": b"{}",
    "100 KB question": json.dumps({"question": "why " * 25_000}).encode(),
    "binary body": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd",
    "invalid JSON": b'{"question": "how do I retry',
    "number question": b'{"question": 42}',
    "list question": b'{"question": ["how", "do", "I"]}',
    "object question": b'{"question": {"text": "hi"}}',
    "null question": b'{"question": null}',
    "body is a list": b'["how do I retry a task?"]',
    "body is a string": b'"how do I retry a task?"',
    "NUL byte": b'{"question": "how do I\\u0000 retry a task?"}',
    "lone surrogate": b'{"question": "how do I \\ud800 retry a task?"}',
}


@pytest.fixture
def channels() -> dict[str, Any]:
    cache.clear()  # rate-limit counters outlive transactional tests
    guru: Guru = GuruFactory(slug="docs", name="Docs Guru")
    owner = UserFactory(username="owner")
    guru.maintainers.add(owner)
    key = api_key_create(user=owner, name="test", guru=guru, rate_limit_per_minute=1000).raw
    widget = widget_id_create(guru=guru, name="site", allowed_origins=[ORIGIN], rate_limit_per_minute=1000,
                              per_ip_rate_limit_per_minute=1000)
    return {
        "guru page": ("/g/docs/ask/", {}),
        "widget stream": ("/widget/stream/", {"HTTP_AUTHORIZATION": widget.key, "HTTP_ORIGIN": ORIGIN}),
        "widget ask": ("/widget/ask/", {"HTTP_AUTHORIZATION": widget.key, "HTTP_ORIGIN": ORIGIN}),
        "API": ("/api/v1/docs/answer/", {"HTTP_X_API_KEY": key}),
    }


def _post(path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any] | None, str]:
    response = Client(enforce_csrf_checks=False).post(path, data=body, content_type="application/json", **headers)
    raw = b"".join(response) if response.streaming else response.content
    try:
        return response.status_code, json.loads(raw), response["Content-Type"]
    except ValueError:
        return response.status_code, None, response["Content-Type"]


@pytest.mark.parametrize("channel", ["guru page", "widget stream", "widget ask", "API"])
@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_a_bad_question_is_a_clear_4xx_on_every_channel(channels: dict[str, Any], channel: str, case: str) -> None:
    path, headers = channels[channel]
    status, payload, content_type = _post(path, BAD_BODIES[case], headers)
    assert 400 <= status < 500, (channel, case, status, payload)
    assert content_type.startswith("application/json") and payload is not None and payload.get("code"), payload
    assert not Question.objects.exists(), "a refused question must not be stored"


@pytest.mark.parametrize("channel", ["guru page", "widget stream", "API"])
def test_a_good_question_still_streams(channels: dict[str, Any], channel: str) -> None:
    path, headers = channels[channel]
    body = {"question": "How do I retry a task?", "stream": True}
    response = Client(enforce_csrf_checks=False).post(path, data=body, content_type="application/json", **headers,
                                                      HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and b"".join(response)
    assert Question.objects.count() == 1
