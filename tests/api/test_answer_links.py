"""`question_url`: an absolute, signed link that opens the page showing that very answer."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from backend.answering.links import answer_path
from backend.answering.models import Question
from backend.gurus.models import Guru
from tests.api.test_answers import indexed as indexed  # the fixture: guru A with one indexed PDF

pytestmark = pytest.mark.django_db


def _shared_events(html: str) -> list[list[object]]:
    found = re.search(r'<script id="shared-answer" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None, "the page carries no answer"
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_question_url_is_absolute_and_opens_that_answer(api: APIClient, indexed: Guru) -> None:
    data = api.post("/api/v1/guru-a/answer/", {"question": "how do I retry a task"}, format="json").json()
    url = data["question_url"]
    assert re.fullmatch(r"http://testserver/g/guru-a/answers/[^/]+/", url), url
    page = Client().get(url.removeprefix("http://testserver"))
    assert page.status_code == 200
    events = dict((name, body) for name, body in _shared_events(page.content.decode()))
    assert events["delta"]["text"] == data["content"] and "self.retry()" in data["content"]  # type: ignore[index]
    assert events["question"]["question_id"] == data["question_id"]  # type: ignore[index]


def test_links_cannot_be_forged_counted_or_moved_to_another_guru(api: APIClient, indexed: Guru,
                                                                 guru_b: Guru) -> None:
    data = api.post("/api/v1/guru-a/answer/", {"question": "how do I retry a task"}, format="json").json()
    path = data["question_url"].removeprefix("http://testserver")
    token = path.rstrip("/").rsplit("/", 1)[1]
    number, _, signature = token.partition(":")
    client = Client()
    assert client.get(f"/g/guru-a/answers/{int(number) + 1}:{signature}/").status_code == 404
    assert client.get(f"/g/guru-a/answers/{number}/").status_code == 404
    assert client.get(f"/g/guru-b/answers/{token}/").status_code == 404
    other = Question.objects.create(guru=guru_b, user_question="q", question="q", slug="q")
    assert client.get(answer_path(other).replace("/guru-b/", "/guru-a/")).status_code == 404


def test_an_unfinished_answer_has_no_page(indexed: Guru) -> None:
    pending = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q", state="PENDING")
    assert Client().get(answer_path(pending)).status_code == 404
