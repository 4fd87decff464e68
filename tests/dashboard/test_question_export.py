"""Dashboard: the questions list as a CSV download — same filters, every column, spreadsheet-safe, bounded cost."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from backend.answering.models import Channel, Question
from backend.gurus.models import Guru
from tests.dashboard.questions_support import ask
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

EXPORT = "/dashboard/g/celery/questions/export.csv"


def download(client: Client, **params: str) -> tuple[Any, list[dict[str, str]]]:
    response = client.get(EXPORT, params)
    body = b"".join(response).decode("utf-8")
    return response, list(csv.DictReader(io.StringIO(body)))


def test_every_question_with_its_answer_and_telemetry(client: Client, guru: Guru) -> None:
    ask(guru, "How do I retry a task?", content="Use `autoretry_for` [1].", trust_score=0.91, feedback=1,
        latency_ms=1234, cost_usd=Decimal("0.001234"), channel=Channel.API,
        references=[{"n": 1, "title": "Retrying", "link": "https://docs.example.com/retry"}, {"n": 2, "link": "/x"}])
    ask(guru, "What is the weather?", content="The sources do not cover this.", out_of_context=True, feedback=-1)
    ask(guru, "Interrupted", content="")
    response, rows = download(client)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="celery-questions-')
    assert [r["question"] for r in rows] == ["Interrupted", "What is the weather?", "How do I retry a task?"]
    first = rows[2]
    assert (first["channel"], first["status"], first["trust_score"], first["feedback"]) == ("REST API", "answered",
                                                                                          "0.91", "up")
    assert (first["latency_ms"], first["cost_usd"], first["answer"]) == ("1234", "0.001234", "Use `autoretry_for` [1].")
    assert first["references"] == "Retrying | /x" and first["asked_at"].startswith("20")
    assert (rows[1]["status"], rows[1]["feedback"], rows[0]["status"]) == ("refused", "down", "unfinished")


def test_the_page_s_filters_apply_and_its_link_carries_them(client: Client, guru: Guru) -> None:
    ask(guru, "Broker setup", channel=Channel.SLACK)
    ask(guru, "Broker costs", channel=Channel.WEB)
    ask(guru, "Unrelated", channel=Channel.SLACK)
    _, rows = download(client, q="broker", channel="SLACK")
    assert [r["question"] for r in rows] == ["Broker setup"]
    page = client.get("/dashboard/g/celery/questions/", {"q": "broker", "channel": "SLACK"}).content.decode()
    assert f'href="{EXPORT}?q=broker&amp;channel=SLACK" download>export these as CSV' in page
    _, everything = download(client, trust_below="abc")  # an invalid filter is dropped, as on the page
    assert len(everything) == 3


def test_cells_a_spreadsheet_would_run_as_formulas_are_neutralised(client: Client, guru: Guru) -> None:
    ask(guru, '=HYPERLINK("https://evil.example","click")', user_question="+1+1", content="@SUM(A1)")
    ask(guru, "-2 or a plain question", content="Fine, = is only dangerous first.")
    _, rows = download(client)
    assert rows[1]["question"] == "'=HYPERLINK(\"https://evil.example\",\"click\")"
    assert (rows[1]["user_question"], rows[1]["answer"]) == ("'+1+1", "'@SUM(A1)")
    assert rows[0]["question"] == "'-2 or a plain question" and rows[0]["answer"] == "Fine, = is only dangerous first."


def test_only_this_guru_s_questions_and_only_for_its_maintainers(client: Client, guru: Guru) -> None:
    other = Guru.objects.create(slug="django", name="Django Guru")
    ask(other, "Not celery")
    ask(guru, "Celery one")
    _, rows = download(client)
    assert [r["question"] for r in rows] == ["Celery one"]
    assert client.get("/dashboard/g/django/questions/export.csv").status_code == 404
    client.force_login(UserFactory(username="eve"))
    assert client.get(EXPORT).status_code == 404
    client.logout()
    assert client.get(EXPORT)["Location"].startswith("/accounts/login/")


def test_the_export_reads_in_batches_not_one_query_per_row(
    client: Client, guru: Guru, django_assert_max_num_queries: Any,
) -> None:
    Question.objects.bulk_create([Question(guru=guru, question=f"Q {i}", user_question=f"q {i}", slug=f"b{i}",
                                           content="A.") for i in range(1200)])
    with django_assert_max_num_queries(8):
        _, rows = download(client)
    assert len(rows) == 1200
