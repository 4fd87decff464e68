"""The answer endpoint in its three modes, and the sessions/questions read endpoints."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from rest_framework.test import APIClient

from backend.answering.models import Question
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from tests.fakes.pdfs import pdf_bytes

pytestmark = pytest.mark.django_db

MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it.",
           "The countdown argument sets the delay before the retry in seconds."]]


@pytest.fixture
def indexed(guru_a: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru_a, kind=SourceKind.PDF, upload=upload, title="Manual")
    return guru_a


def _body(response: object) -> str:
    return b"".join(response).decode()  # type: ignore[call-overload]


def test_json_answer_in_the_reference_shape(api: APIClient, indexed: Guru) -> None:
    response = api.post("/api/v1/guru-a/answer/", {"question": "how do I retry a task"}, format="json")
    assert response.status_code == 200
    data = response.json()
    assert set(data) >= {"slug", "content", "question", "date_updated", "trust_score", "references", "session_id",
                         "question_url"}
    assert isinstance(data["trust_score"], int) and 50 <= data["trust_score"] <= 100
    assert data["references"][0] == {"title": "Manual — page 1", "link": f"{data['references'][0]['link']}",
                                     "icon": "http://testserver/static/img/sources/pdf.svg", "kind": "pdf",
                                     "n": 1, "cited": True}
    assert all(not r["cited"] for r in data["also_retrieved"])
    # Links are absolute: an API client shows them outside our site.
    assert re.fullmatch(r"http://testserver/sources/\d+/file#page=1", data["references"][0]["link"])
    assert "self.retry()" in data["content"]
    assert Question.objects.get(pk=data["question_id"]).channel == "API"


@pytest.mark.django_db(transaction=True)  # the stream runs in its own thread and connection
def test_markdown_stream_then_fetch_existing(api: APIClient, indexed: Guru) -> None:
    streamed = api.post("/api/v1/guru-a/answer/", {"question": "How do I retry a task?", "stream": True},
                        format="json")
    # Gurubase's clients check for text/event-stream before reading the raw markdown.
    assert streamed.status_code == 200 and streamed["Content-Type"] == "text/event-stream"
    text = _body(streamed)
    assert "self.retry()" in text and "event:" not in text
    existing = api.post("/api/v1/guru-a/answer/", {"question": "How do I retry a task?", "fetch_existing": True},
                        format="json")
    assert existing.status_code == 200 and existing.json()["content"] == text
    # Gurubase's api_ask: `fetch_existing` with `stream` streams the stored answer; nothing new is asked.
    count = Question.objects.count()
    again = api.post("/api/v1/guru-a/answer/", {"question": "How do I retry a task?", "fetch_existing": True,
                                                "stream": True}, format="json")
    assert again["Content-Type"] == "text/event-stream" and _body(again) == text and Question.objects.count() == count


@pytest.mark.django_db(transaction=True)  # the stream runs in its own thread and connection
def test_sse_mode_carries_everything_in_one_call(api: APIClient, indexed: Guru) -> None:
    response = api.post("/api/v1/guru-a/answer/", {"question": "How do I retry a task?"}, format="json",
                        HTTP_ACCEPT="text/event-stream")
    events = [block.split("\n")[0].removeprefix("event: ") for block in _body(response).split("\n\n") if block]
    assert events[0] == "question" and "references" in events and events[-1] == "done"


def test_follow_up_in_the_same_session_and_session_history(api: APIClient, indexed: Guru) -> None:
    first = api.post("/api/v1/guru-a/answer/", {"question": "How do I retry a task?"}, format="json").json()
    second = api.post("/api/v1/guru-a/answer/", {"question": "and the delay?", "session_id": first["session_id"]},
                      format="json").json()
    assert second["session_id"] == first["session_id"]
    sessions = api.get("/api/v1/guru-a/sessions/").json()
    assert sessions["count"] == 1 and sessions["results"][0]["questions"] == 2
    detail = api.get(f"/api/v1/guru-a/sessions/{first['session_id']}/").json()
    assert [q["id"] for q in detail["questions"]] == [first["question_id"], second["question_id"]]


def test_out_of_context_questions_are_listed_for_the_maintainer(api: APIClient, indexed: Guru) -> None:
    refused = api.post("/api/v1/guru-a/answer/", {"question": "What is the capital of Peru?"}, format="json").json()
    assert refused["out_of_context"] and refused["references"] == []
    listed = api.get("/api/v1/guru-a/questions/?out_of_context=true").json()
    assert [q["id"] for q in listed["results"]] == [refused["question_id"]]


@pytest.mark.parametrize(("payload", "status", "code"), [
    ({}, 400, "invalid_question"), ({"question": "x" * 2001}, 400, "invalid_question"),
    ({"question": "hi", "session_id": "nope"}, 400, "invalid_session"), ([1], 400, "invalid_json"),
    ({"question": "hi", "stream": "maybe"}, 400, "invalid_stream"),
    ({"question": "hi", "session_id": "00000000-0000-0000-0000-000000000000"}, 404, "not_found"),
])
def test_errors_are_json_with_codes(api: APIClient, guru_a: Guru, payload: dict, status: int, code: str) -> None:
    response = api.post("/api/v1/guru-a/answer/", payload, format="json")
    assert response.status_code == status and response.json()["code"] == code


def test_scoping_and_unknown_paths(api: APIClient, guru_b: Guru) -> None:
    assert api.post("/api/v1/guru-b/answer/", {"question": "hi"}, format="json").status_code == 403
    assert APIClient().post("/api/v1/guru-b/answer/", {"question": "hi"}, format="json").status_code == 401
    missing = api.get("/api/v1/nowhere/at/all/")
    assert missing.status_code == 404 and json.loads(missing.content)["code"] == "not_found"


def test_a_questions_filter_that_is_not_a_boolean_is_a_400(api: APIClient, guru_a: Guru) -> None:
    assert api.get("/api/v1/guru-a/questions/?out_of_context=false").status_code == 200
    response = api.get("/api/v1/guru-a/questions/?out_of_context=maybe")
    assert response.status_code == 400 and response.json()["code"] == "invalid"


def test_a_form_field_sent_twice_is_refused_not_guessed(api: APIClient, guru_a: Guru) -> None:
    body = "question=hi&fetch_existing=true&fetch_existing="
    response = api.generic("POST", "/api/v1/guru-a/answer/", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and response.json()["code"] == "invalid_fetch_existing"
    once = api.generic("POST", "/api/v1/guru-a/answer/", "question=&stream=on",
                       content_type="application/x-www-form-urlencoded")
    assert once.status_code == 400 and once.json()["code"] == "invalid_question"
