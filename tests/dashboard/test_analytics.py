"""Dashboard analytics: numbers of a known dataset, zero days, escaping, access, query counts at 10k questions."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from backend.answering.citations import citations_from, citations_record
from backend.answering.models import Channel, Citation, Question
from backend.core.selectors import settings_get
from backend.dashboard.analytics.selectors import CitedSource, guru_analytics, period_from
from backend.gurus.models import Guru
from tests.factories import DataSourceFactory, GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ

HOSTILE = '<script>alert("x")</script> & "quotes"'


def ask(guru: Guru, days_ago: int, *, answered: bool = True, refused: bool = False, **fields: Any) -> Question:
    """A question created `days_ago` days ago at noon (local time); created_at is auto_now_add, so set it after."""
    n = Question.objects.count()
    question = Question.objects.create(guru=guru, user_question=f"q{n}", question=f"Question {n}", slug=f"q-{n}",
                                       content="An answer." if answered or refused else "", out_of_context=refused,
                                       **fields)
    moment = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=days_ago)
    Question.objects.filter(pk=question.pk).update(created_at=moment)
    question.created_at = moment
    citations_record(question, question.references)  # as the answer flow records them
    return question


@pytest.fixture
def dataset(guru: Guru) -> dict[str, Any]:
    """Five questions in the last 7 days, one older, and one of another guru."""
    docs = DataSourceFactory(guru=guru, title="Retrying tasks", url="https://docs.example.com/retry")
    hostile = DataSourceFactory(guru=guru, title=HOSTILE, url="https://docs.example.com/evil")
    ref = {"n": 1, "kind": "WEBSITE", "score": 0.9, "locator": {}}
    ask(guru, 0, trust_score=0.8, latency_ms=1000, feedback=1, cost_usd=Decimal("0.01"), references=[
        {**ref, "source_id": docs.pk, "title": "Retrying tasks"}, {**ref, "n": 2, "source_id": docs.pk},
        {**ref, "n": 3, "source_id": hostile.pk, "title": HOSTILE}])
    ask(guru, 0, trust_score=0.6, latency_ms=2000, feedback=-1, channel=Channel.API,
        references=[{**ref, "source_id": docs.pk}, {**ref, "n": 2, "source_id": 999_999, "title": "Gone page"}])
    ask(guru, 0, refused=True, trust_score=0.1, latency_ms=500)
    ask(guru, 2, trust_score=0.7, latency_ms=3000, channel=Channel.SLACK,
        references=[{"n": 1, "title": "Old page", "link": "https://old.example.com/x"},
                    {"n": 2, "title": "Evil link", "link": "javascript:alert(1)"}])
    ask(guru, 2, answered=False)
    ask(guru, 10, trust_score=0.2, references=[{**ref, "source_id": docs.pk}])
    ask(GuruFactory(), 0, trust_score=0.9, references=[{**ref, "source_id": docs.pk}])
    return {"docs": docs, "hostile": hostile}


def test_numbers_match_a_known_dataset(guru: Guru, dataset: dict[str, Any]) -> None:
    data = guru_analytics(guru=guru, period=7)
    s = data.summary
    assert (s.total, s.answered, s.refused, s.unfinished) == (5, 3, 1, 1)
    assert s.avg_trust == pytest.approx(0.7) and s.avg_latency_ms == pytest.approx(1625)
    assert (s.feedback_up, s.feedback_down, s.cost_usd) == (1, 1, Decimal("0.01"))
    assert dict(data.channels) == {"Web page": 3, "REST API": 1, "Slack": 1}
    docs, hostile = dataset["docs"], dataset["hostile"]
    assert data.top_sources[0] == CitedSource(docs.pk, "Retrying tasks", "https://docs.example.com/retry", 2)
    assert set(data.top_sources[1:]) == {
        CitedSource(hostile.pk, HOSTILE, "https://docs.example.com/evil", 1),
        CitedSource(999_999, "Gone page", "", 1, deleted=True),  # deleted since: the title it was cited with
    }  # references without a source id (recorded before ids were) have no citation rows
    thirty = guru_analytics(guru=guru, period=30).summary
    assert (thirty.total, thirty.answered) == (6, 4)


def test_every_day_of_the_period_is_listed_zeros_included(guru: Guru, dataset: dict[str, Any]) -> None:
    data = guru_analytics(guru=guru, period=7)
    today = timezone.localdate()
    assert [d.day for d in data.days] == [today - timedelta(days=6 - i) for i in range(7)]
    by_age = {(today - d.day).days: d for d in data.days}
    assert (by_age[0].total, by_age[0].answered, by_age[0].refused) == (3, 2, 1)
    assert by_age[0].avg_trust == pytest.approx(0.7)
    assert (by_age[2].total, by_age[2].answered, by_age[2].unfinished) == (2, 1, 1)
    assert all(by_age[age].total == 0 and by_age[age].avg_trust is None for age in (1, 3, 4, 5, 6))


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_questions_fall_on_their_local_day_across_midnight_and_dst(guru: Guru, settings: Any, zone: str) -> None:
    settings.TIME_ZONE = zone
    today = timezone.localdate()
    moments: list[tuple[datetime, int]] = []  # (local moment, expected days ago)
    for age in range(1, 89):  # every local midnight of the period, DST changes included
        midnight = timezone.make_aware(datetime.combine(today - timedelta(days=age), time.min))
        moments += [(midnight - timedelta(microseconds=1), age + 1), (midnight, age)]
    for n, (moment, _) in enumerate(moments):
        question = Question.objects.create(guru=guru, user_question=f"m{n}", question=f"M {n}", slug=f"m-{n}")
        Question.objects.filter(pk=question.pk).update(created_at=moment)
    data = guru_analytics(guru=guru, period=90)
    expected = Counter(age for _, age in moments if age < 90)
    assert {(today - d.day).days: d.total for d in data.days if d.total} == dict(expected)


def test_period_is_bounded_to_the_offered_choices() -> None:
    assert [period_from(v) for v in ["7", "90", None, "", "365", "-1", "abc", "30"]] == [7, 90, 30, 30, 30, 30, 30, 30]


def test_page_renders_charts_and_numbers(client: Client, dataset: dict[str, Any]) -> None:
    page = client.get("/dashboard/g/celery/analytics/?days=7").content.decode()
    assert page.count('role="img"') == 5 and page.count("<svg") == 5
    assert "Questions per day, last 7 days" in page and "Answers citing the source" in page
    assert re.search(r'class="kpi-value">5<', page) and re.search(r'class="kpi-value">0.70<', page)
    assert "1625 ms" in page and "threshold 0.50" in page and 'aria-current="true">7 days' in page
    # Seven day labels under each of the three per-day charts (at 7 days every label fits).
    assert page.count('class="tick" text-anchor="middle"') == 3 * 7


def test_hostile_source_titles_are_escaped_in_svg_and_table(client: Client, dataset: dict[str, Any]) -> None:
    page = client.get("/dashboard/g/celery/analytics/").content.decode()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in page
    assert 'href="javascript:' not in page


def test_empty_period_renders(client: Client, guru: Guru) -> None:
    page = client.get("/dashboard/g/celery/analytics/?days=90").content.decode()
    assert "No questions in the last 90 days yet." in page and page.count("<svg") == 4  # no sources chart


def test_another_maintainer_gets_404_and_anonymous_a_login_redirect(client: Client, guru: Guru) -> None:
    client.force_login(UserFactory(username="bob"))
    assert client.get("/dashboard/g/celery/analytics/").status_code == 404
    client.logout()
    response = client.get("/dashboard/g/celery/analytics/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_ten_thousand_questions_take_a_bounded_number_of_queries(
    client: Client, guru: Guru, django_assert_max_num_queries: Any
) -> None:
    sources = [DataSourceFactory(guru=guru, title=f"Page {i}") for i in range(25)]
    noon = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    for day in range(30):
        rows = [
            Question(guru=guru, user_question="q", question="q", slug=f"q-{day}-{i}", content="a",
                     out_of_context=i % 7 == 0, trust_score=(i % 10) / 10, latency_ms=800 + i,
                     channel=Channel.WEB if i % 3 else Channel.API, feedback=(1 if i % 5 == 0 else None),
                     references=[{"n": 1, "source_id": sources[(day + i) % 25].pk, "title": "t", "link": ""},
                                 {"n": 2, "source_id": sources[i % 25].pk, "title": "t", "link": ""}])
            for i in range(334)
        ]
        created = Question.objects.bulk_create(rows)
        Question.objects.filter(pk__in=[q.pk for q in created]).update(created_at=noon - timedelta(days=day))
        for question in created:
            question.created_at = noon - timedelta(days=day)
        Citation.objects.bulk_create([c for q in created for c in citations_from(q, q.references)])
    assert Question.objects.count() == 10_020
    settings_get()  # the settings row exists on a running instance; creating it is a one-off
    # Session, user, guru, settings, then per day, totals, channels, cited sources and their titles.
    with django_assert_max_num_queries(9):
        response = client.get("/dashboard/g/celery/analytics/?days=30")
    assert response.status_code == 200
    assert re.search(r'class="kpi-value">10020<', response.content.decode())
