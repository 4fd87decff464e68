"""Dashboard questions: list, search, filters, pages, one question in full, users' feedback, query counts."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.answering.models import Binge, Channel, Question
from backend.api.services import api_key_create
from backend.core.selectors import settings_get
from backend.dashboard.questions.gaps import RECENT_REFUSALS
from backend.gurus.models import Guru
from tests.dashboard.questions_support import ask
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()  # rate-limit counters outlive tests


@pytest.fixture
def other_guru() -> Guru:
    guru: Guru = GuruFactory(slug="django", name="Django Guru")
    guru.maintainers.add(UserFactory(username="bo"))
    return guru


def rows(response: Any) -> list[str]:
    """The question texts listed, in order."""
    return [r.question.question for r in response.context["rows"]]


# ---- the list ------------------------------------------------------------------------------------


def test_list_shows_every_column(client: Client, guru: Guru) -> None:
    root = ask(guru, "How do I retry a task?", trust_score=0.91, latency_ms=1234, cost_usd=Decimal("0.001234"),
               feedback=1, channel=Channel.API)
    ask(guru, "And how often?", parent=root, trust_score=0.3, feedback=-1)
    ask(guru, "What is the capital of Peru?", out_of_context=True, trust_score=0.0, content="Not covered.")
    response = client.get("/dashboard/g/celery/questions/")
    html = response.content.decode()
    assert rows(response) == ["What is the capital of Peru?", "And how often?", "How do I retry a task?"]
    assert '<span class="badge ok">91%</span>' in html  # at or above the 50% default threshold
    assert '<span class="badge warn">30%</span>' in html  # below it
    assert '<span class="badge error">0%</span>' in html and "not covered" in html
    assert "1234 ms" in html and "$0.0012" in html and "REST API" in html
    assert 'aria-label="Helpful"' in html and 'aria-label="Not helpful"' in html
    assert html.count(">follow-up</span>") == 1
    assert f'href="/dashboard/g/celery/questions/{root.pk}/"' in html


def test_list_escapes_what_users_typed(client: Client, guru: Guru) -> None:
    ask(guru, "<script>alert(1)</script>", user_question="<img src=x onerror=alert(1)>")
    html = client.get("/dashboard/g/celery/questions/").content.decode()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_search_is_case_insensitive_over_both_texts(client: Client, guru: Guru) -> None:
    ask(guru, "How do I configure the Broker?", user_question="broker config")
    ask(guru, "What is a worker?", user_question="WHAT ABOUT REDIS workers")
    ask(guru, "Unrelated question")
    assert rows(client.get("/dashboard/g/celery/questions/", {"q": "BROKER"})) == ["How do I configure the Broker?"]
    assert rows(client.get("/dashboard/g/celery/questions/", {"q": "redis"})) == ["What is a worker?"]
    response = client.get("/dashboard/g/celery/questions/", {"q": "nothing like this"})
    assert rows(response) == [] and "No question matches these filters" in response.content.decode()


@pytest.mark.parametrize(("params", "expected"), [
    ({"channel": "API"}, ["api"]),
    ({"status": "refused"}, ["refused"]),
    ({"status": "answered"}, ["liked", "disliked", "api", "plain"]),
    ({"feedback": "up"}, ["liked"]),
    ({"feedback": "down"}, ["disliked"]),
    ({"feedback": "some"}, ["liked", "disliked"]),
    ({"feedback": "none"}, ["refused", "api", "plain"]),
    ({"trust_below": "60"}, ["refused", "disliked"]),
    ({"channel": "WEB", "feedback": "up"}, ["liked"]),
])
def test_filters(client: Client, guru: Guru, params: dict[str, str], expected: list[str]) -> None:
    ask(guru, "plain")
    ask(guru, "api", channel=Channel.API)
    ask(guru, "disliked", feedback=-1, trust_score=0.55)
    ask(guru, "liked", feedback=1)
    ask(guru, "refused", out_of_context=True, trust_score=0.0)
    assert rows(client.get("/dashboard/g/celery/questions/", params)) == expected  # newest first


def test_invalid_filters_are_reported_and_ignored(client: Client, guru: Guru) -> None:
    ask(guru, "plain")
    response = client.get("/dashboard/g/celery/questions/", {"channel": "FAX", "trust_below": "500",
                                                            "q": "x" * 201, "feedback": "maybe"})
    assert response.status_code == 200 and rows(response) == ["plain"]
    assert response.context["form"].errors.keys() == {"channel", "trust_below", "q", "feedback"}


def test_pages_of_fifty_newest_first(client: Client, guru: Guru) -> None:
    assert "Nobody has asked Celery Guru anything yet" in client.get("/dashboard/g/celery/questions/").content.decode()
    Question.objects.bulk_create([Question(guru=guru, question=f"question {i:03}", user_question=f"q{i}",
                                           slug=f"s{i}") for i in range(120)])
    first = client.get("/dashboard/g/celery/questions/")
    assert len(rows(first)) == 50 and first.context["page"].paginator.num_pages == 3
    assert 'href="?page=2"' in first.content.decode()
    third = client.get("/dashboard/g/celery/questions/", {"page": "3", "q": "question"})
    assert len(rows(third)) == 20
    assert 'href="?page=2&amp;q=question"' in third.content.decode()
    assert client.get("/dashboard/g/celery/questions/", {"page": "999"}).context["page"].number == 3
    assert client.get("/dashboard/g/celery/questions/", {"page": "x"}).context["page"].number == 1


# ---- one question ----------------------------------------------------------------------------------


def test_detail_shows_the_answer_references_and_telemetry(client: Client, guru: Guru) -> None:
    binge = Binge.objects.create(guru=guru)
    first = ask(guru, "How do I retry a task?", binge=binge)
    content = "Call `self.retry()` [1].\n\n<img src=x onerror=alert(1)>"
    question = ask(
        guru, "How many times at most?", user_question="and how many times?", binge=binge, parent=first,
        content=content, trust_score=0.87, latency_ms=2100, cost_usd=Decimal("0.000321"), feedback=-1,
        references=[{"n": 1, "source_id": 3, "title": "Retrying", "link": "https://docs.example.com/retry",
                     "kind": "WEBSITE", "score": 0.912, "locator": ""},
                    {"n": 2, "source_id": 4, "title": "Evil", "link": "javascript:alert(1)", "kind": "PDF",
                     "score": 0.5, "locator": "page 3"}],
        timings={"understand_ms": 400, "rerank_ms": 30, "total_ms": 2100, "retrieve_ms": 80},
        usage={"answer": {"model": "gpt-x", "prompt_tokens": 900, "completion_tokens": 120,
                          "cached_prompt_tokens": 0}})
    ask(guru, "Another session entirely")
    response = client.get(f"/dashboard/g/celery/questions/{question.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    # The markdown travels as JSON for the client-side renderer; the raw fallback is escaped.
    assert '<script id="dq-answer-content" type="application/json">' in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<a href="https://docs.example.com/retry"' in html and "91% match" in html
    assert "javascript:" not in html and "<span>Evil</span>" in html and "page 3" in html
    assert "87%" in html and "2100 ms" in html and "$0.000321" in html and "👎 Not helpful" in html
    assert [stage for stage, _ in response.context["timings"]] == ["understand", "retrieve", "rerank", "total"]
    assert "gpt-x" in html and ">900<" in html
    assert "and how many times?" in html and "follow-up" in html
    assert [t.pk for t in response.context["turns"]] == [first.pk, question.pk]
    assert f'href="/dashboard/g/celery/questions/{first.pk}/"' in html and "Another session" not in html
    assert 'href="/g/celery/"' in html


def test_detail_without_an_answer_or_session(client: Client, guru: Guru) -> None:
    question = ask(guru, "Stopped early", content="", trust_score=None)
    response = client.get(f"/dashboard/g/celery/questions/{question.pk}/")
    assert "No answer was recorded" in response.content.decode() and response.context["turns"] == []


# ---- who may see what -----------------------------------------------------------------------------------


def test_another_maintainer_gets_404s(client: Client, guru: Guru, other_guru: Guru) -> None:
    mine, theirs = ask(guru, "Mine?"), ask(other_guru, "Theirs?")
    client.force_login(other_guru.maintainers.get())
    for url in ["/dashboard/g/celery/questions/", f"/dashboard/g/celery/questions/{mine.pk}/",
                "/dashboard/g/celery/unanswered/"]:
        assert client.get(url).status_code == 404, url
    assert client.get(f"/dashboard/g/django/questions/{theirs.pk}/").status_code == 200
    assert client.get(f"/dashboard/g/django/questions/{mine.pk}/").status_code == 404  # not through their guru
    assert client.get(f"/dashboard/g/django/questions/{2**64}/").status_code == 404


def test_anonymous_visitors_are_sent_to_login(guru: Guru) -> None:
    response = Client().get("/dashboard/g/celery/questions/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


# ---- feedback: the public page ---------------------------------------------------------------------------


def vote(client: Client, slug: str, payload: object) -> Any:
    return client.post(f"/g/{slug}/feedback/", json.dumps(payload), content_type="application/json")


@pytest.fixture
def answered(guru: Guru) -> Question:
    return ask(guru, "How do I retry a task?", binge=Binge.objects.create(guru=guru))


def test_public_feedback_can_be_given_changed_and_cleared(answered: Question) -> None:
    client, session = Client(), str(answered.binge_id)
    for value in [1, -1, None]:
        response = vote(client, "celery", {"question_id": answered.pk, "session_id": session, "feedback": value})
        assert response.status_code == 200 and response.json() == {"question_id": answered.pk, "feedback": value}
        answered.refresh_from_db()
        assert answered.feedback == value


@pytest.mark.parametrize(("payload", "code"), [
    ({"feedback": 2}, "invalid_feedback"), ({"feedback": "1"}, "invalid_feedback"),
    ({"feedback": True}, "invalid_feedback"), ({"feedback": 0}, "invalid_feedback"),
    ({"question_id": "7"}, "invalid_question"), ({"question_id": -1}, "invalid_question"),
    ({"session_id": None}, "invalid_session"), ({"session_id": "s" * 65}, "invalid_session"),
])
def test_public_feedback_rejects_bad_input(answered: Question, payload: dict[str, Any], code: str) -> None:
    body = {"question_id": answered.pk, "session_id": str(answered.binge_id), "feedback": 1, **payload}
    response = vote(Client(), "celery", body)
    assert response.status_code == 400 and response.json()["code"] == code
    assert Client().post("/g/celery/feedback/", "[1", content_type="application/json").status_code == 400
    answered.refresh_from_db()
    assert answered.feedback is None


def test_public_feedback_needs_the_question_s_guru_and_session(answered: Question, other_guru: Guru) -> None:
    session, pk = str(answered.binge_id), answered.pk
    cases = [("django", pk, session), ("celery", pk, str(uuid.uuid4())), ("celery", pk, "not-a-uuid"),
             ("celery", 2**70, session), ("nope", pk, session)]
    for slug, question_id, session_id in cases:
        response = vote(Client(), slug, {"question_id": question_id, "session_id": session_id, "feedback": 1})
        assert response.status_code == 404, (slug, question_id, session_id)
    answered.refresh_from_db()
    assert answered.feedback is None


def test_public_feedback_is_csrf_protected_and_post_only(answered: Question) -> None:
    guarded = Client(enforce_csrf_checks=True)
    payload = {"question_id": answered.pk, "session_id": str(answered.binge_id), "feedback": 1}
    assert vote(guarded, "celery", payload).status_code == 403
    token = guarded.get("/g/celery/").cookies["csrftoken"].value
    ok = guarded.post("/g/celery/feedback/", json.dumps(payload), content_type="application/json",
                      HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200
    assert Client().get("/g/celery/feedback/").status_code == 405


def test_public_feedback_is_rate_limited_per_ip(answered: Question, settings: SettingsWrapper) -> None:
    settings.OPENGURU_FEEDBACK_RATE_LIMIT = 2
    payload = {"question_id": answered.pk, "session_id": str(answered.binge_id), "feedback": 1}
    responses = [vote(Client(), "celery", payload) for _ in range(5)]  # a minute boundary may reset the count once
    refused = [r for r in responses if r.status_code == 429]
    assert refused and refused[0].json()["code"] == "rate_limited" and int(refused[0]["Retry-After"]) >= 1
    other_ip = Client(REMOTE_ADDR="10.0.0.9")
    assert vote(other_ip, "celery", payload).status_code == 200


def test_private_guru_feedback_is_for_maintainers(answered: Question, guru: Guru) -> None:
    Guru.objects.filter(pk=guru.pk).update(private=True)
    payload = {"question_id": answered.pk, "session_id": str(answered.binge_id), "feedback": -1}
    assert vote(Client(), "celery", payload).status_code == 403


def test_the_guru_page_points_at_the_feedback_url(guru: Guru) -> None:
    assert 'data-feedback-url="/g/celery/feedback/"' in Client().get("/g/celery/").content.decode()


# ---- feedback: the REST API ----------------------------------------------------------------------------------


@pytest.fixture
def api(maintainer: Any, guru: Guru) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=maintainer, name="t", guru=None).raw)
    return client


def test_api_feedback(api: APIClient, answered: Question, other_guru: Guru) -> None:
    url = f"/api/v1/celery/questions/{answered.pk}/feedback/"
    for value in [-1, 1, None]:
        response = api.post(url, {"feedback": value}, format="json")
        assert response.status_code == 200 and response.json() == {"question_id": answered.pk, "feedback": value}
        answered.refresh_from_db()
        assert answered.feedback == value
    for bad in [{"feedback": 5}, {"feedback": "1"}, {"feedback": True}, {}]:
        response = api.post(url, bad, format="json")
        assert response.status_code == 400 and response.json()["code"] == "invalid", bad
    theirs = ask(other_guru, "Theirs?").pk
    for path, status in [(f"celery/questions/{theirs}", 404), (f"django/questions/{theirs}", 403),
                         (f"celery/questions/{2**64}", 404)]:
        assert api.post(f"/api/v1/{path}/feedback/", {"feedback": 1}, format="json").status_code == status, path
    assert APIClient().post(url, {"feedback": 1}, format="json").status_code == 401


def test_feedback_shows_in_the_dashboard(client: Client, answered: Question) -> None:
    vote(Client(), "celery", {"question_id": answered.pk, "session_id": str(answered.binge_id), "feedback": 1})
    assert rows(client.get("/dashboard/g/celery/questions/", {"feedback": "up"})) == ["How do I retry a task?"]
    assert "👍 Helpful" in client.get(f"/dashboard/g/celery/questions/{answered.pk}/").content.decode()


# ---- 10k questions: a fixed, small number of queries ---------------------------------------------------------


@pytest.fixture
def many(guru: Guru) -> Guru:
    binge = Binge.objects.create(guru=guru)
    topics = ["retry a task", "configure the broker", "single sign on with Okta", "price of the plan"]
    Question.objects.bulk_create([
        Question(guru=guru, question=f"How do I {topics[i % 4]} number {i}?", user_question=f"q {i}",
                 slug=f"s{i}", binge=binge if i % 100 == 0 else None, trust_score=(i % 10) / 10,
                 out_of_context=i % 7 == 0, feedback=(1, -1, None)[i % 3], content="Answer [1].",
                 references=[{"n": 1, "title": "T", "link": "https://x.example/", "kind": "WEBSITE", "score": 0.9}],
                 latency_ms=i, channel=Channel.WEB if i % 2 else Channel.API)
        for i in range(10_000)], batch_size=1000)
    return guru


def test_pages_stay_at_a_few_queries_with_10k_questions(
    client: Client, many: Guru, django_assert_max_num_queries: Any,
) -> None:
    settings_get()  # the settings row exists in any running instance; creating it is a one-off
    client.get("/dashboard/g/celery/unanswered/")  # embeds and caches the 500 most recent refusals once
    question = Question.objects.filter(guru=many, binge__isnull=False).order_by("pk").first()
    assert question is not None
    pages = [("/dashboard/g/celery/questions/", {}), ("/dashboard/g/celery/questions/", {"page": "150"}),
             ("/dashboard/g/celery/questions/", {"q": "broker", "feedback": "up", "channel": "WEB"}),
             ("/dashboard/g/celery/questions/", {"trust_below": "30", "status": "answered"}),
             (f"/dashboard/g/celery/questions/{question.pk}/", {}), ("/dashboard/g/celery/unanswered/", {})]
    for url, params in pages:
        # session, user, guru, settings (thresholds), then count + page, or question + its session turns
        with django_assert_max_num_queries(6):
            assert client.get(url, params).status_code == 200
    report = client.get("/dashboard/g/celery/unanswered/").context["report"]
    assert report.considered == RECENT_REFUSALS and report.total == len(range(0, 10_000, 7))
    assert sum(g.size for g in report.gaps) == RECENT_REFUSALS
