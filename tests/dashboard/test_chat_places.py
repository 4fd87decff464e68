"""A chat question's channel is named with its workspace and channel: "Slack · Acme · #general" (issue #16, item 7).

On the Questions list, a question's page, the analytics channel breakdown (split per place) and the CSV export.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from backend.answering.models import Binge, Channel, Question
from backend.dashboard.analytics.selectors import guru_analytics
from backend.gurus.models import Guru
from tests.dashboard.questions_support import ask

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too

GENERAL, SUPPORT = "Acme · #general", "Acme & Co · #support"


def chat(guru: Guru, question: str, channel: str, place: str) -> Question:
    binge = Binge.objects.create(guru=guru, channel=channel, place=place)
    return ask(guru, question, channel=channel, binge=binge)


@pytest.fixture
def asked(guru: Guru) -> dict[str, Question]:
    return {"general": chat(guru, "Retry in general", Channel.SLACK, GENERAL),
            "general2": chat(guru, "Again in general", Channel.SLACK, GENERAL),
            "support": chat(guru, "Retry in support", Channel.SLACK, SUPPORT),
            "discord": chat(guru, "From Discord", Channel.DISCORD, "Guild · #help"),
            "web": ask(guru, "From the web"),
            "web_session": ask(guru, "Web in a session", binge=Binge.objects.create(guru=guru))}


def row_of(page: str, question: Question) -> str:
    return page.split(f'data-question="{question.pk}"', 1)[1].split("</tr>", 1)[0]


def test_questions_list_and_page_name_the_place(client: Client, guru: Guru, asked: dict[str, Question],
                                                django_assert_max_num_queries: object) -> None:
    client.get("/dashboard/g/celery/questions/")  # one-offs of a fresh database (the settings row)
    with django_assert_max_num_queries(6):  # type: ignore[operator]  # as without places: they come in the page's query
        page = client.get("/dashboard/g/celery/questions/").content.decode()
    assert "<td>Slack · Acme · #general</td>" in row_of(page, asked["general"])
    assert "<td>Slack · Acme &amp; Co · #support</td>" in row_of(page, asked["support"])
    assert "<td>Discord · Guild · #help</td>" in row_of(page, asked["discord"])
    for web in ("web", "web_session"):  # a web conversation has a session but no place
        assert "<td>Web page</td>" in row_of(page, asked[web])

    detail = client.get(f"/dashboard/g/celery/questions/{asked['support'].pk}/").content.decode()
    assert "<dt>Channel</dt><dd>Slack · Acme &amp; Co · #support</dd>" in detail
    detail = client.get(f"/dashboard/g/celery/questions/{asked['web'].pk}/").content.decode()
    assert "<dt>Channel</dt><dd>Web page</dd>" in detail


def test_analytics_split_a_chat_channel_by_place(client: Client, guru: Guru, asked: dict[str, Question]) -> None:
    channels = guru_analytics(guru=guru, period=7).channels
    assert channels == [("Slack · Acme · #general", 2), ("Web page", 2), ("Discord · Guild · #help", 1),
                        ("Slack · Acme & Co · #support", 1)]
    page = client.get("/dashboard/g/celery/analytics/").content.decode()
    assert "<td>Slack · Acme &amp; Co · #support</td>" in page


def test_export_has_a_place_column(client: Client, guru: Guru, asked: dict[str, Question]) -> None:
    response = client.get("/dashboard/g/celery/questions/export.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response).decode())))
    places = {row["question"]: (row["channel"], row["place"]) for row in rows}
    assert places["Retry in support"] == ("Slack", SUPPORT)
    assert places["From Discord"] == ("Discord", "Guild · #help")
    assert places["From the web"] == ("Web page", "") and places["Web in a session"] == ("Web page", "")
