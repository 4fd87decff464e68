"""Faults while an answer streams, through a real uvicorn server and the fake OpenAI server: the client hanging up
mid-answer or before it, the model timing out or failing, the web server restarting (issue #12 items 12 and the
"Faults survived" rows). Rows are read by polling for their state, never after fixed sleeps."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.models import AnswerState, Question
from backend.core.errors import PUBLIC_MESSAGES
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, grades
from tests.support.restartable_server import eventually, uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SLOW_ANSWER = ScriptedReply(text=" ".join(f"word{i}" for i in range(80)), chunks=80, chunk_delay=0.05)
Events = list[tuple[str, dict[str, Any]]]


def _csrf(client: httpx.Client, base: str) -> dict[str, str]:
    client.get(f"{base}/g/docs/")  # sets the csrftoken cookie, as the page does for its script
    return {"X-CSRFToken": client.cookies["csrftoken"], "Accept": "text/event-stream"}


def _read_events(response: httpx.Response, stop: Callable[[Events], bool] = lambda _: False) -> Events:
    events: Events = []
    name = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            events.append((name, json.loads(line.removeprefix("data: "))))
            if stop(events):
                break
    return events


def _ask(base: str) -> Events:
    with httpx.Client(timeout=30) as client:
        headers = _csrf(client, base)
        with client.stream("POST", f"{base}/g/docs/ask/", json={"question": QUESTION}, headers=headers) as response:
            assert response.status_code == 200
            return _read_events(response)


def _hang_up(base: str, stop: Callable[[Events], bool]) -> Events:
    """Ask, read until `stop` says so, then close the connection the way a closed browser tab does."""
    with httpx.Client(timeout=30) as client:
        headers = _csrf(client, base)
        with client.stream("POST", f"{base}/g/docs/ask/", json={"question": QUESTION}, headers=headers) as response:
            return _read_events(response, stop)


def _settled(question_id: int) -> Question:
    eventually(lambda: Question.objects.get(pk=question_id).state != AnswerState.PENDING, "the question to settle")
    return Question.objects.get(pk=question_id)


def _deltas(events: Events) -> int:
    return sum(1 for name, _ in events if name == "delta")


def test_hanging_up_mid_answer_cancels_it_and_it_is_never_served(indexed: Guru, with_llm: OpenAIFakeServer,
                                                                  asgi_live_server: str) -> None:
    with_llm.script.push(grades(0.9), SLOW_ANSWER)
    seen = _hang_up(asgi_live_server, lambda events: _deltas(events) >= 10)
    assert _deltas(seen) == 10
    question = _settled(seen[0][1]["question_id"])
    assert question.state == AnswerState.CANCELLED and question.content == "" and question.trust_score is None
    assert question.error_code == "cancelled"
    # Generation stopped: the model's stream was closed long before its 80 pieces were sent.
    eventually(lambda: bool(with_llm.stream_outcomes), "the model stream to end")
    outcome = with_llm.stream_outcomes[0]
    assert outcome.client_disconnected and outcome.events_sent < outcome.events_total // 2
    with_llm.script.push(grades(0.9), ScriptedReply(text="Call self.retry() inside the task [1].", chunks=4))
    again = _ask(asgi_live_server)
    done = again[-1]
    assert done[0] == "done" and "cache_hit" not in done[1]["timings"]
    assert "".join(d["text"] for n, d in again if n == "delta") == "Call self.retry() inside the task [1]."
    assert Question.objects.get(pk=done[1]["question_id"]).state == AnswerState.COMPLETE


def test_hanging_up_before_generation_leaves_a_cancelled_row(indexed: Guru, with_llm: OpenAIFakeServer,
                                                             asgi_live_server: str) -> None:
    with_llm.script.push(ScriptedReply(json=grades(0.9).json, delay=1.0), SLOW_ANSWER)
    seen = _hang_up(asgi_live_server, lambda events: events[-1][0] == "question")
    question = _settled(seen[0][1]["question_id"])
    assert question.state == AnswerState.CANCELLED and question.content == ""
    # The answer may have started beside the grade (unless the hang-up came first); it was never shown, and
    # its model stream was closed long before its 80 pieces were sent, so no answer is generated for nobody.
    streamed = [r for r in with_llm.script.requests if r.stream]
    assert len(streamed) <= 1
    eventually(lambda: len(with_llm.stream_outcomes) == len(streamed), "the answer stream to end")
    assert all(o.client_disconnected and o.events_sent < o.events_total // 2 for o in with_llm.stream_outcomes)


@pytest.mark.parametrize("fault", ["timeout", "429", "500"])
def test_model_faults_back_off_then_end_with_a_clean_error_event(
    indexed: Guru, with_llm: OpenAIFakeServer, asgi_live_server: str, settings: SettingsWrapper, fault: str
) -> None:
    if fault == "timeout":
        settings.OPENGURU_LLM = {**settings.OPENGURU_LLM, "TIMEOUT": "0.3"}
        with_llm.script.push(*[ScriptedReply(json=grades(0.9).json, delay=1.0)] * 4)
    else:
        with_llm.retry_after = "0" if fault == "429" else None
        with_llm.script.push(*[ScriptedReply(status=int(fault), stream=False)] * 4)
    started = time.monotonic()
    events = _ask(asgi_live_server)
    elapsed = time.monotonic() - started
    name, error = events[-1]
    assert name == "error" and error["code"] == "model_unavailable"
    assert error["msg"] == PUBLIC_MESSAGES["model_unavailable"] and len(error["error_id"]) == 12
    assert "Scripted" not in json.dumps(events) and "timed out" not in json.dumps(events).lower()
    grading = [r for r in with_llm.script.requests if not r.stream]
    assert len(grading) == 4, "the first try and three retries"
    if fault == "500":
        assert elapsed >= 0.5 * (0.5 + 1 + 2)  # exponential backoff with jitter ≥ half of each step
    question = Question.objects.get(pk=events[0][1]["question_id"])
    assert question.state == AnswerState.FAILED and question.content == "" and question.error_id == error["error_id"]
    assert not Question.objects.filter(state=AnswerState.COMPLETE).exists()  # nothing half-saved as complete


def test_a_web_restart_mid_stream_is_an_error_for_the_client_and_the_next_question_works(
    indexed: Guru, with_llm: OpenAIFakeServer
) -> None:
    with_llm.script.push(grades(0.9), ScriptedReply(text=" ".join(["word"] * 200), chunks=200, chunk_delay=0.05))
    deltas = 0
    with uvicorn_server() as web, httpx.Client(timeout=httpx.Timeout(30, read=10)) as client:
        headers = _csrf(client, web.url)
        request = client.stream("POST", f"{web.url}/g/docs/ask/", json={"question": QUESTION}, headers=headers)
        # A broken chunked body: what the browser's fetch() reports as a network error (the page shows it).
        with request as response, pytest.raises(httpx.RemoteProtocolError):
            for line in response.iter_lines():
                deltas += line.startswith("event: delta")
                if deltas == 5:
                    web.kill()
    assert deltas == 5
    question = _settled(Question.objects.get().pk)
    assert question.state != AnswerState.COMPLETE and question.content == ""
    with_llm.script.push(grades(0.9), ScriptedReply(text="Call self.retry() [1].", chunks=3))
    with uvicorn_server(web.port) as again:  # the web server back on its address
        answered = _ask(again.url)
    assert answered[-1][0] == "done" and "cache_hit" not in answered[-1][1]["timings"]
    assert "".join(d["text"] for n, d in answered if n == "delta") == "Call self.retry() [1]."
