"""POST /widget/feedback/: a widget visitor's thumbs up/down on an answer of their own conversation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Binge, Channel, Question
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from tests.factories import GuruFactory
from tests.widget.test_widget_api import EVIL, ORIGIN, call, cors_headers

pytestmark = pytest.mark.django_db

URL = "/widget/feedback/"
OTHER_SESSION = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    # Rate-limit counters live in the shared cache, which outlives a test's transaction.
    cache.clear()
    yield
    cache.clear()


def answered(guru: Guru, text: str = "How do I retry a task?") -> Question:
    """An answered widget question in a conversation of its own."""
    binge = Binge.objects.create(guru=guru, channel=Channel.WIDGET)
    return Question.objects.create(guru=guru, binge=binge, question=text, user_question=text.lower(),
                                   slug=f"q-{Question.objects.count() + 1}", content="An answer.",
                                   channel=Channel.WIDGET, intent="question", trust_score=0.8)


@pytest.fixture
def guru() -> Guru:
    created: Guru = GuruFactory(slug="docs", name="Docs Guru")
    return created


@pytest.fixture
def widget(guru: Guru) -> WidgetId:
    return WidgetId.objects.create(guru=guru, allowed_origins=[ORIGIN])


@pytest.fixture
def question(guru: Guru) -> Question:
    return answered(guru)


def vote(widget: WidgetId, question: Question, value: Any, url: str = URL, **kwargs: Any) -> Any:
    body = {"question_id": question.pk, "session_id": str(question.binge_id), "feedback": value}
    return call("POST", url, key=widget.key, body=body, **kwargs)


def stored(question: Question) -> int | None:
    return Question.objects.get(pk=question.pk).feedback


def test_vote_change_and_clear(widget: WidgetId, question: Question) -> None:
    up = vote(widget, question, 1)
    assert up.status_code == 200 and up.json() == {"question_id": question.pk, "feedback": 1}
    assert cors_headers(up) == {"access-control-allow-origin": ORIGIN, "access-control-expose-headers": "Retry-After"}
    assert "Origin" in up["Vary"] and stored(question) == 1
    down = vote(widget, question, -1, url="/api/widget/feedback/")  # mirrored like the other widget endpoints
    assert down.status_code == 200 and stored(question) == -1
    cleared = vote(widget, question, None)
    assert cleared.status_code == 200 and cleared.json()["feedback"] is None and stored(question) is None


def test_the_instance_own_pages_may_vote(widget: WidgetId, question: Question) -> None:
    # The dashboard's live preview: same origin, not listed among the widget's origins.
    assert vote(widget, question, 1, origin="http://testserver").status_code == 200


@pytest.mark.parametrize(("change", "code"), [
    ({"feedback": True}, "invalid_feedback"), ({"feedback": "1"}, "invalid_feedback"),
    ({"feedback": 2}, "invalid_feedback"), ({"feedback": 0}, "invalid_feedback"),
    ({"feedback": 1.0}, "invalid_feedback"),
    ({"question_id": "1"}, "invalid_question"), ({"question_id": True}, "invalid_question"),
    ({"question_id": 0}, "invalid_question"), ({"question_id": None}, "invalid_question"),
    ({"session_id": 5}, "invalid_session"), ({"session_id": ""}, "invalid_session"),
    ({"session_id": "x" * 65}, "invalid_session"),
])
def test_invalid_input_is_400(widget: WidgetId, question: Question, change: dict[str, Any], code: str) -> None:
    body = {"question_id": question.pk, "session_id": str(question.binge_id), "feedback": 1, **change}
    response = call("POST", URL, key=widget.key, body=body)
    data = response.json()
    assert response.status_code == 400 and data["code"] == code and data["error"] == data["msg"]
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    assert stored(question) is None


@pytest.mark.parametrize(("body", "status", "code"), [
    ("not json", 400, "invalid_json"), ([1], 400, "invalid_json"),
    ({"question_id": 1, "session_id": OTHER_SESSION, "feedback": 1, "pad": "x" * 20_000}, 413, "too_large"),
])
def test_bad_bodies(widget: WidgetId, body: Any, status: int, code: str) -> None:
    response = call("POST", URL, key=widget.key, body=body)
    assert response.status_code == status and response.json()["code"] == code


@pytest.mark.parametrize("session", [OTHER_SESSION, "not-a-uuid", "session"])
def test_another_conversation_cannot_vote(widget: WidgetId, question: Question, session: str) -> None:
    # Question ids are sequential: holding the conversation's id is what allows a vote.
    mine = answered(widget.guru, "Something else?")
    for session_id in (session, str(mine.binge_id)):
        body = {"question_id": question.pk, "session_id": session_id, "feedback": -1}
        response = call("POST", URL, key=widget.key, body=body)
        data = response.json()
        assert response.status_code == 404 and data["code"] == "not_found" and data["error"] == data["msg"]
        assert response["Access-Control-Allow-Origin"] == ORIGIN
    assert stored(question) is None


def test_another_gurus_question_is_404(widget: WidgetId) -> None:
    theirs = answered(GuruFactory(slug="other", name="Other Guru"))
    response = vote(widget, theirs, 1)
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert stored(theirs) is None
    missing = call("POST", URL, key=widget.key, body={"question_id": 2**63, "session_id": OTHER_SESSION,
                                                       "feedback": 1})
    assert missing.status_code == 404


@pytest.mark.parametrize("origin", [EVIL, "https://evilexample.com", "null", None])
def test_disallowed_origin_is_refused_without_cors_headers(widget: WidgetId, question: Question,
                                                           origin: str | None) -> None:
    response = vote(widget, question, 1, origin=origin)
    assert response.status_code == 403 and response.json()["code"] == "origin_not_allowed"
    assert cors_headers(response) == {} and stored(question) is None


@pytest.mark.parametrize("key", [None, "nope"])
def test_unknown_widget_id_is_401(widget: WidgetId, question: Question, key: str | None) -> None:
    body = {"question_id": question.pk, "session_id": str(question.binge_id), "feedback": 1}
    response = call("POST", URL, key=key, body=body)
    assert response.status_code == 401 and response.json()["code"] == "invalid_widget_id"
    assert stored(question) is None


@pytest.mark.parametrize("path", [URL, "/api/widget/feedback/"])
def test_preflight(widget: WidgetId, path: str) -> None:
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    response = call("OPTIONS", path, **asked)
    assert response.status_code == 204
    assert cors_headers(response) == {
        "access-control-allow-origin": ORIGIN, "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "Authorization, Content-Type, Accept", "access-control-max-age": "600"}
    refused = call("OPTIONS", path, origin=EVIL, **asked)
    assert refused.status_code == 403 and cors_headers(refused) == {}


def test_only_post(widget: WidgetId) -> None:
    response = call("GET", URL, key=widget.key)
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
    assert response["Allow"] == "POST, OPTIONS"


@pytest.mark.production_profile
def test_votes_are_rate_limited_per_ip(widget: WidgetId, question: Question, settings: SettingsWrapper) -> None:
    cache.clear()
    settings.OPENGURU_FEEDBACK_RATE_LIMIT = 2
    replies = [vote(widget, question, 1, remote_addr="10.0.0.1") for _ in range(5)]  # a minute may roll over once
    refused = [r for r in replies if r.status_code == 429]
    assert replies[0].status_code == 200 and refused
    data = refused[0].json()
    assert data["code"] == "rate_limited" and data["error"] == data["msg"] and int(refused[0]["Retry-After"]) >= 1
    assert refused[0]["Access-Control-Allow-Origin"] == ORIGIN
    assert refused[0]["Access-Control-Expose-Headers"] == "Retry-After"
    assert vote(widget, question, -1, remote_addr="10.0.0.2").status_code == 200
    assert stored(question) == -1
