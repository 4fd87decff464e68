"""Errors reach askers as a stable code, a fixed sentence and an error id; the cause goes to the log and to the
question's page in the dashboard (issue #12 item 3); errors known before the first byte keep their HTTP status in
every mode and later ones end the stream visibly (item 5)."""

from __future__ import annotations

import json
import logging
import re

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.events import EventKind
from backend.answering.models import AnswerState, Question
from backend.api.services import api_key_create
from backend.core.errors import PUBLIC_MESSAGES
from backend.core.sidecars import free_port
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, ask, grades, of_kind, sse_events

pytestmark = [pytest.mark.django_db(transaction=True),  # streams run in their own thread and connection
              pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")]

ERROR_ID = re.compile(r"^[0-9a-f]{12}$")
UNKNOWN_SESSION = "00000000-0000-0000-0000-000000000000"


def _failing(llm: OpenAIFakeServer, status: int = 500) -> None:
    # The grade's first try and the adapter's three retries (the answer streamed beside it gets the default).
    llm.script.push(*[ScriptedReply(status=status, stream=False)] * 4)


def _assert_recorded(error: dict[str, object], code: str, cause: str) -> Question:
    question = Question.objects.get()
    assert question.state == AnswerState.FAILED and question.content == "" and question.trust_score is None
    assert (question.error_code, question.error_id) == (code, error["error_id"])
    assert cause in question.error_detail
    return question


def test_a_model_failure_is_a_code_a_sentence_and_an_id(indexed: Guru, with_llm: OpenAIFakeServer,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    _failing(with_llm)
    with caplog.at_level(logging.WARNING, logger="backend.answering.services"):
        stream = ask(indexed)
    error = of_kind(stream, EventKind.ERROR)[0]
    assert set(error) == {"code", "msg", "error_id"} and ERROR_ID.match(str(error["error_id"]))
    assert error["code"] == "model_unavailable" and error["msg"] == PUBLIC_MESSAGES["model_unavailable"]
    sent = json.dumps([e.data for e in stream])
    assert "Scripted failure" not in sent and "HTTP" not in sent and "openai" not in sent.lower()
    assert len([r for r in with_llm.script.requests if not r.stream]) == 4  # retried with backoff before giving up
    logged = [r for r in caplog.records if str(error["error_id"]) in r.getMessage()]
    assert logged and logged[0].exc_info is not None and "Scripted failure" in str(logged[0].exc_info[1])
    _assert_recorded(error, "model_unavailable", "Scripted failure (HTTP 500)")


def test_the_guru_page_shows_the_id_and_the_maintainer_sees_the_cause(
    indexed: Guru, with_llm: OpenAIFakeServer, client: Client
) -> None:
    _failing(with_llm)
    response = Client().post("/g/docs/ask/", {"question": QUESTION}, content_type="application/json")
    events = sse_events(b"".join(response))
    assert events[0][0] == "question" and events[-1][0] == "error"
    error = events[-1][1]
    assert "Scripted" not in json.dumps(events) and error["msg"] == PUBLIC_MESSAGES["model_unavailable"]
    question = _assert_recorded(error, "model_unavailable", "Scripted failure")
    client.force_login(indexed.maintainers.get())
    page = client.get(f"/dashboard/g/docs/questions/{question.pk}/").content.decode()
    assert "No answer was recorded: the answer failed." in page
    assert "model_unavailable" in page and str(error["error_id"]) in page and "Scripted failure (HTTP 500)" in page


def test_a_vector_store_outage_is_vector_store_unavailable(indexed: Guru, settings: SettingsWrapper) -> None:
    # Milvus that does not answer (nothing listens on the port): the store, not the model, is named.
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": f"http://127.0.0.1:{free_port()}", "TOKEN": ""}
    stream = ask(indexed)
    error = of_kind(stream, EventKind.ERROR)[0]
    assert error["code"] == "vector_store_unavailable"
    assert error["msg"] == PUBLIC_MESSAGES["vector_store_unavailable"] and "Milvus" not in json.dumps(error)
    _assert_recorded(error, "vector_store_unavailable", "Milvus")


def test_an_unexpected_crash_is_internal_error(indexed: Guru, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        raise RuntimeError("KeyError in /srv/openguru/backend/retrieval/secret.py")

    monkeypatch.setattr("backend.answering.services.retrieve", broken)  # our own code, standing in for a bug
    error = of_kind(ask(indexed), EventKind.ERROR)[0]
    assert error["code"] == "internal_error" and "secret" not in json.dumps(error)
    _assert_recorded(error, "internal_error", "RuntimeError: KeyError in /srv/openguru")


@pytest.fixture
def api(indexed: Guru) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=indexed.maintainers.get(), name="t", guru=indexed).raw)
    return client


def test_the_api_json_mode_is_a_503_with_the_error_id(api: APIClient, with_llm: OpenAIFakeServer) -> None:
    _failing(with_llm, status=503)
    response = api.post("/api/v1/docs/answer/", {"question": QUESTION}, format="json")
    body = response.json()
    assert response.status_code == 503 and set(body) == {"code", "msg", "error_id"}
    assert body["code"] == "model_unavailable" and "Scripted" not in response.content.decode()
    _assert_recorded(body, "model_unavailable", "Scripted failure (HTTP 503)")


@pytest.mark.parametrize("mode", ["markdown", "sse", "json"])
def test_an_unknown_session_is_a_404_in_every_api_mode(api: APIClient, mode: str) -> None:
    payload = {"question": QUESTION, "session_id": UNKNOWN_SESSION, "stream": mode == "markdown"}
    accept = {"HTTP_ACCEPT": "text/event-stream"} if mode == "sse" else {}
    response = api.post("/api/v1/docs/answer/", payload, format="json", **accept)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_found"


def test_an_unknown_session_is_a_404_on_the_guru_page(indexed: Guru) -> None:
    response = Client().post("/g/docs/ask/", {"question": QUESTION, "session_id": UNKNOWN_SESSION},
                             content_type="application/json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_markdown_stream_that_fails_before_its_first_byte_is_a_503(api: APIClient,
                                                                     with_llm: OpenAIFakeServer) -> None:
    _failing(with_llm)
    response = api.post("/api/v1/docs/answer/", {"question": QUESTION, "stream": True}, format="json")
    assert response.status_code == 503 and response.json()["code"] == "model_unavailable"
    _assert_recorded(response.json(), "model_unavailable", "Scripted failure (HTTP 500)")


def test_a_markdown_stream_that_fails_later_ends_with_a_marker_line(api: APIClient,
                                                                     with_llm: OpenAIFakeServer) -> None:
    with_llm.script.push(grades(0.9), ScriptedReply(text="Call self.retry() inside the task [1].", chunks=8))
    with_llm.cut_stream_after = 3  # the model's connection drops after three pieces of the answer
    response = api.post("/api/v1/docs/answer/", {"question": QUESTION, "stream": True}, format="json")
    assert response.status_code == 200  # the first bytes had gone out when the model failed
    text = b"".join(response).decode()
    question = Question.objects.get()
    marker = f"[OpenGuru error: model_unavailable] {PUBLIC_MESSAGES['model_unavailable']} (error id " \
             f"{question.error_id})"
    assert text.startswith("Call") and text.endswith(f"\n\n---\n{marker}\n") and "ended" not in text
    assert question.state == AnswerState.FAILED and question.error_code == "model_unavailable"
    assert "ended the stream before the answer finished" in question.error_detail and question.content == ""
    with_llm.cut_stream_after = 0  # the model is down now
    fetched = api.post("/api/v1/docs/answer/", {"question": QUESTION, "fetch_existing": True}, format="json")
    # A failed answer is never handed out as one: with none stored, the question is asked again (Gurubase's rule).
    assert fetched.status_code == 503 and fetched.json()["code"] == "model_unavailable"
