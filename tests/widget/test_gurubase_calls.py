"""Gurubase's widget calls at {base}/<guru>/…: suggested follow-ups, votes by slug, and the guru's icon URL."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Binge, Channel, Question
from backend.gurus.examples import guru_example_add
from backend.gurus.models import ExampleQuestion, Guru
from backend.widget.models import WidgetId
from tests.factories import GuruFactory
from tests.fakes.openai_server import FAKE_EMBED_MODEL, OpenAIFakeServer
from tests.widget.test_widget_api import (  # noqa: F401 - the autouse fixture clears counters and cached vectors
    ORIGIN,
    _fresh_rate_limits,
    call,
    cors_headers,
)

pytestmark = pytest.mark.django_db

EXAMPLES = ["How do I schedule a periodic task?", "Which brokers does Celery support?",
            "How do I retry a task after a failure?", "How do I monitor workers?",
            "How many times is a task retried at most?"]


@pytest.fixture
def guru() -> Guru:
    made: Guru = GuruFactory(slug="celery", name="Celery Guru")
    for text in EXAMPLES:
        guru_example_add(guru=made, text=text)
    return made


@pytest.fixture
def widget(guru: Guru) -> WidgetId:
    return WidgetId.objects.create(guru=guru, allowed_origins=[ORIGIN])


def asked(guru: Guru, text: str, *, binge: Binge | None = None, slug: str = "") -> Question:
    """A widget answer; a new conversation (opened by it) unless `binge` is given."""
    opened = binge is None
    binge = binge or Binge.objects.create(guru=guru, channel=Channel.WIDGET)
    question = Question.objects.create(guru=guru, binge=binge, question=text, user_question=text.lower(),
                                       slug=slug or f"q-{Question.objects.count() + 1}", content="An answer.",
                                       channel=Channel.WIDGET, intent="question", trust_score=0.8)
    if opened:
        Binge.objects.filter(pk=binge.pk).update(root_question=question)
    return question


def suggest(widget: WidgetId, body: dict[str, object], path: str = "/api/celery/follow_up/examples/") -> list[str]:
    response = call("POST", path, key=widget.key, body=body)
    assert response.status_code == 200, response.content
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    data = response.json()
    assert isinstance(data, list) and all(isinstance(text, str) for text in data)
    return data


# ---- suggested follow-ups ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/celery/follow_up/examples/", "/celery/follow_up/examples/"])
def test_follow_ups_are_related_examples_not_yet_asked(widget: WidgetId, guru: Guru, path: str) -> None:
    first = asked(guru, "How are my workers doing, can I monitor them?")
    body = {"binge_id": None, "question_slug": first.slug, "question_text": "are my workers ok", "widget": True}
    suggestions = suggest(widget, body, path)
    # The hashing embedder scores shared words: the 4th example in the maintainer's order comes first.
    assert len(suggestions) == 3 and suggestions[0] == "How do I monitor workers?"


def test_follow_ups_leave_out_an_example_that_rephrases_the_question(widget: WidgetId, guru: Guru) -> None:
    last = asked(guru, "After a failure, how do I retry a task?")  # the 3rd example, reworded
    suggestions = suggest(widget, {"binge_id": None, "question_slug": last.slug, "question_text": "x"})
    assert "How do I retry a task after a failure?" not in suggestions and len(suggestions) == 3


def test_follow_ups_skip_everything_asked_in_the_conversation(widget: WidgetId, guru: Guru) -> None:
    first = asked(guru, "How many times is a task retried at most?")
    binge = first.binge
    assert binge is not None
    asked(guru, "how do i monitor workers", binge=binge)
    last = asked(guru, "Which brokers does Celery support?", binge=binge)
    suggestions = suggest(widget, {"binge_id": str(binge.pk), "question_slug": last.slug, "question_text": "x"})
    assert sorted(suggestions) == sorted(["How do I schedule a periodic task?",
                                          "How do I retry a task after a failure?"])


def test_follow_ups_are_an_empty_list_without_examples(widget: WidgetId, guru: Guru) -> None:
    ExampleQuestion.objects.filter(guru=guru).update(approved=False)  # suggestions never unapproved ones
    assert suggest(widget, {"binge_id": None, "question_slug": "never-asked", "question_text": "hi"}) == []
    ExampleQuestion.objects.filter(guru=guru).delete()
    assert suggest(widget, {}) == []


def test_follow_ups_for_an_unknown_question_come_in_the_maintainers_order(widget: WidgetId) -> None:
    assert suggest(widget, {"question_slug": "never-asked", "question_text": "hello"}) == EXAMPLES[:3]


def test_follow_ups_keep_working_when_the_embedder_fails(widget: WidgetId, guru: Guru, settings: SettingsWrapper,
                                                         openai_server: OpenAIFakeServer) -> None:
    first = asked(guru, "How do I retry a task after a failure?")
    # A remote embedder that refuses the key: ranking is skipped, the suggestions still come.
    settings.OPENGURU_EMBEDDER = {"BACKEND": "openai", "API_KEY": "revoked", "MODEL": FAKE_EMBED_MODEL,
                                  "DIMENSION": "384", "BASE_URL": openai_server.api_base}
    assert suggest(widget, {"question_slug": first.slug}) == [EXAMPLES[0], EXAMPLES[1], EXAMPLES[3]]


@pytest.mark.parametrize(("body", "code"), [({"question_slug": 5}, "invalid_question_slug"),
                                            ({"binge_id": "not-a-uuid"}, "invalid_binge"),
                                            ({"question_text": "x" * 5000}, "invalid_question_text")])
def test_follow_ups_refuse_malformed_fields(widget: WidgetId, body: dict[str, object], code: str) -> None:
    response = call("POST", "/api/celery/follow_up/examples/", key=widget.key, body=body)
    assert response.status_code == 400 and response.json()["code"] == code
    assert response["Access-Control-Allow-Origin"] == ORIGIN  # the widget can read why


def test_follow_ups_need_the_widgets_own_guru_and_origin(widget: WidgetId) -> None:
    GuruFactory(slug="other")
    other = call("POST", "/api/other/follow_up/examples/", key=widget.key, body={})
    assert other.status_code == 404 and other.json()["code"] == "not_found"
    assert call("POST", "/api/celery/follow_up/examples/", key="nope", body={}).status_code == 401
    refused = call("POST", "/api/celery/follow_up/examples/", key=widget.key, body={}, origin="https://evil.test")
    assert refused.status_code == 403 and cors_headers(refused) == {}


def test_follow_ups_and_votes_answer_preflights(widget: WidgetId) -> None:
    for path in ("/api/celery/follow_up/examples/", "/celery/record_vote/", "/api/celery/record_vote/"):
        response = call("OPTIONS", path, **{"Access-Control-Request-Method": "POST",
                                            "Access-Control-Request-Headers": "authorization,content-type"})
        assert response.status_code == 204 and response["Access-Control-Allow-Origin"] == ORIGIN
        assert "Authorization" in response["Access-Control-Allow-Headers"]


# ---- votes -------------------------------------------------------------------------------------------------------


def vote(widget: WidgetId, body: dict[str, object], path: str = "/api/celery/record_vote/") -> dict[str, object]:
    response = call("POST", path, key=widget.key, body=body)
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    return {"status": response.status_code, **response.json()}


def test_a_vote_on_the_first_answer_needs_no_conversation_id(widget: WidgetId, guru: Guru) -> None:
    first = asked(guru, "How do I retry a task?")
    reply = vote(widget, {"content_slug": first.slug, "binge_id": None, "vote_type": "upvote", "feedback": None})
    assert reply["status"] == 200 and reply["vote_type"] == "upvote" and reply["question_id"] == first.pk
    first.refresh_from_db()
    assert first.feedback == 1
    # Gurubase lets a visitor change their mind; the downvote's comment is accepted (and not stored).
    assert vote(widget, {"content_slug": first.slug, "binge_id": "", "vote_type": "downvote",
                         "feedback": "Missing the countdown option."}, "/celery/record_vote/")["status"] == 200
    first.refresh_from_db()
    assert first.feedback == -1


def test_a_vote_names_the_answer_in_its_conversation(widget: WidgetId, guru: Guru) -> None:
    first = asked(guru, "How do I retry a task?")
    binge = Binge.objects.create(guru=guru, channel=Channel.WIDGET)
    follow_up = asked(guru, "and the delay?", binge=binge, slug="and-the-delay")
    mine = vote(widget, {"content_slug": "and-the-delay", "binge_id": str(binge.pk), "vote_type": "downvote"})
    assert mine["status"] == 200 and mine["question_id"] == follow_up.pk
    # A follow-up is only found in its own conversation; without one only answers that opened a conversation.
    elsewhere = vote(widget, {"content_slug": "and-the-delay", "binge_id": str(first.binge_id), "vote_type": "upvote"})
    assert elsewhere["status"] == 404 and elsewhere["code"] == "not_found"
    assert vote(widget, {"content_slug": "and-the-delay", "vote_type": "upvote"})["status"] == 404
    follow_up.refresh_from_db()
    assert follow_up.feedback == -1


def test_a_vote_only_reaches_widget_answers_of_the_widgets_guru(widget: WidgetId, guru: Guru) -> None:
    api_answer = asked(guru, "asked over the API", slug="api-answer")
    Question.objects.filter(pk=api_answer.pk).update(channel=Channel.API)
    assert vote(widget, {"content_slug": "api-answer", "vote_type": "upvote"})["status"] == 404
    other = GuruFactory(slug="other")
    asked(other, "elsewhere", slug="elsewhere")
    assert vote(widget, {"content_slug": "elsewhere", "vote_type": "upvote"})["status"] == 404
    assert call("POST", "/api/other/record_vote/", key=widget.key,
                body={"content_slug": "elsewhere", "vote_type": "upvote"}).status_code == 404


@pytest.mark.parametrize(("body", "code"), [
    ({"vote_type": "upvote"}, "invalid_content_slug"),
    ({"content_slug": "x" * 201, "vote_type": "upvote"}, "invalid_content_slug"),
    ({"content_slug": "a", "vote_type": "love"}, "invalid_vote_type"),
    ({"content_slug": "a", "vote_type": 1}, "invalid_vote_type"),
    ({"content_slug": "a", "vote_type": "upvote", "binge_id": "nope"}, "invalid_binge"),
    ({"content_slug": "a", "vote_type": "downvote", "feedback": "x" * 1001}, "invalid_feedback"),
])
def test_a_malformed_vote_is_a_400_naming_the_field(widget: WidgetId, body: dict[str, object], code: str) -> None:
    reply = vote(widget, body)
    assert reply["status"] == 400 and reply["code"] == code


def test_votes_share_the_visitors_vote_budget(widget: WidgetId, guru: Guru, settings: SettingsWrapper) -> None:
    settings.OPENGURU_FEEDBACK_RATE_LIMIT = 2
    first = asked(guru, "How do I retry a task?")
    body = {"content_slug": first.slug, "vote_type": "upvote"}
    assert [vote(widget, body)["status"] for _ in range(2)] == [200, 200]
    limited = call("POST", "/api/celery/record_vote/", key=widget.key, body={**body, "content_slug": "unknown"})
    # Spent before the lookup: a visitor cannot probe which answers exist once the budget is gone.
    assert limited.status_code == 429 and limited.json()["code"] == "rate_limited" and limited["Retry-After"]


# ---- the guru's icon ---------------------------------------------------------------------------------------------


def test_guru_icon_url_is_absolute_with_a_default(widget: WidgetId, guru: Guru) -> None:
    data = call("GET", "/api/widget/guru/", key=widget.key).json()
    assert data["icon_url"] == "http://testserver/static/img/guru-default.svg"
    assert data["can_receive_feedback"] is True
    Guru.objects.filter(pk=guru.pk).update(icon_url="https://cdn.example.com/celery.png")
    assert call("GET", "/widget/guru/", key=widget.key).json()["icon_url"] == "https://cdn.example.com/celery.png"
