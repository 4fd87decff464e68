"""The answer is generated beside the grade and held until the trust gate passes (issue #13 item 3).

Through the real OpenAI adapter and the fake OpenAI server: a grade that is answered only once the answer's
request has arrived proves the two calls overlap (a sequential pipeline would keep it waiting), so at most
two LLM calls lie before a follow-up's first token; refusals still refuse, show nothing of the answer made
ahead, and close its model stream (seen in the fake's recorded outcomes).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.answering.events import EventKind
from backend.answering.models import Question
from backend.answering.services import NOT_COVERED
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from tests.factories import GuruFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.pdfs import pdf_bytes
from tests.integration.answering.answer_support import QUESTION, ask, grades, of_kind
from tests.support.restartable_server import eventually

pytestmark = [pytest.mark.django_db(transaction=True),  # the answer streams from a thread of its own
              pytest.mark.production_profile]

FOLLOW_UP = "and how many times at most?"
SLOW = ScriptedReply(text=" ".join(f"word{i}" for i in range(80)), chunks=80, chunk_delay=0.05, stream=True)


class GradeAfterTheAnswerStarts(ReplyScript):
    """Holds each grading request until an answer request has arrived, and records whether one did."""

    def __init__(self) -> None:
        super().__init__()
        self.answer_started = threading.Event()
        self.overlapped: list[bool] = []

    def next(self, request: RecordedRequest) -> ScriptedReply:
        if request.stream:
            self.answer_started.set()
        elif "grades" in (request.json_schema or {}).get("properties", {}):
            self.overlapped.append(self.answer_started.wait(timeout=10))
        return super().next(request)


@pytest.fixture
def gated(with_llm: OpenAIFakeServer) -> GradeAfterTheAnswerStarts:
    with_llm.script = GradeAfterTheAnswerStarts()
    return with_llm.script


def _understood(question: str) -> ScriptedReply:
    return ScriptedReply(json={"prettified": question, "intent": "question", "answer_length": "short",
                               "in_scope": True, "retrieval_query": question, "reply": ""})


def _text(stream: list[Any]) -> str:
    return "".join(d["text"] for d in of_kind(stream, EventKind.DELTA))


def _session(guru: Guru) -> str:
    """A first question answered (through the same gate), so the next one is a follow-up with history."""
    first = ask(guru)
    assert of_kind(first, EventKind.DONE), first
    return str(of_kind(first, EventKind.QUESTION)[0]["session_id"])


def _kinds(requests: list[RecordedRequest]) -> list[str]:
    return ["answer" if r.stream else next(iter((r.json_schema or {}).get("properties", {})), "?")
            for r in requests]


def test_a_first_question_grades_and_answers_side_by_side(indexed: Guru, gated: GradeAfterTheAnswerStarts) -> None:
    gated.push(grades(0.9), ScriptedReply(text="Call self.retry() [1].", stream=True))
    stream = ask(indexed)
    assert _text(stream) == "Call self.retry() [1]."
    assert gated.overlapped == [True]  # the answer was asked for before the grade came back
    assert sorted(_kinds(gated.requests)) == ["answer", "grades"]  # one call deep before the first token
    kinds = [e.kind for e in stream]
    assert kinds.index(EventKind.REFERENCES) < kinds.index(EventKind.DELTA)  # tokens only after the gate
    assert of_kind(stream, EventKind.DONE)[0]["timings"]["speculative_answer"] == 1


def test_a_passing_follow_up_costs_two_calls_deep_and_streams(indexed: Guru, gated: GradeAfterTheAnswerStarts,
                                                              with_llm: OpenAIFakeServer) -> None:
    gated.push(grades(0.9), ScriptedReply(text="Call self.retry() [1].", stream=True))
    session = _session(indexed)
    before = len(gated.requests)
    gated.push(_understood("How many times is a task retried at most?"), grades(0.8),
               ScriptedReply(text="At most max_retries times [1].", chunks=4, stream=True))
    stream = ask(indexed, FOLLOW_UP, session_id=session)
    assert _text(stream) == "At most max_retries times [1]."
    follow_up = gated.requests[before:]
    # The rewrite first (it names what to retrieve), then the grade and the answer at once: two calls deep.
    assert _kinds(follow_up)[0] == "prettified" and sorted(_kinds(follow_up)[1:]) == ["answer", "grades"]
    assert gated.overlapped == [True, True]
    (answer,) = [r for r in follow_up if r.stream]
    assert answer.messages[-1] == ("user", "How many times is a task retried at most?")  # the rewritten one
    done = of_kind(stream, EventKind.DONE)[0]
    assert done["trust_score"] >= 0.8 and set(done["usage"]) == {"understand", "grade", "answer"}
    assert not any(o.client_disconnected for o in with_llm.stream_outcomes)


def test_a_refused_follow_up_refuses_shows_nothing_made_ahead_and_closes_its_stream(
    indexed: Guru, gated: GradeAfterTheAnswerStarts, with_llm: OpenAIFakeServer
) -> None:
    gated.push(grades(0.9), ScriptedReply(text="Call self.retry() [1].", stream=True))
    session = _session(indexed)
    gated.push(_understood("How many times is a task retried at most?"), grades(0.0), SLOW)
    stream = ask(indexed, FOLLOW_UP, session_id=session)
    assert _text(stream) == NOT_COVERED.format(guru=indexed.name)  # no word of the answer made ahead
    done = of_kind(stream, EventKind.DONE)[0]
    assert done["out_of_context"] and done["references"] == [] and done["trust_score"] == 0.0
    assert done["timings"]["speculation_discarded"] == 1 and "answer" not in done["usage"]
    assert gated.overlapped == [True, True]
    question = Question.objects.get(pk=done["question_id"])
    assert question.out_of_context and question.content == NOT_COVERED.format(guru=indexed.name)
    # The speculative stream was closed by us long before its 80 pieces were sent.
    eventually(lambda: len(with_llm.stream_outcomes) == 2, "the cancelled answer stream to end")
    cancelled = with_llm.stream_outcomes[-1]
    assert cancelled.client_disconnected and cancelled.events_sent < cancelled.events_total // 2


@pytest.fixture
def two_pages(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    """A manual whose second page only touches the question, so the reranker predicts it will not be kept."""
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="docs", name="Docs Guru", domain_knowledge="the Celery task queue")
    pages = [["Retrying tasks", "Call self.retry() inside a bound task to retry a task.",
              "The countdown argument sets the delay before a task retry in seconds."],
             ["Periodic tasks", "celery beat runs a task on a schedule."]]
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(pages), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    return guru


def test_a_grade_keeping_other_contexts_regenerates_from_exactly_those(
    two_pages: Guru, gated: GradeAfterTheAnswerStarts, with_llm: OpenAIFakeServer
) -> None:
    gated.push(ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(10)]}), SLOW,
               ScriptedReply(text="Retry with self.retry() [1]; beat schedules [2].", stream=True))
    stream = ask(two_pages, "How do I retry a task?")
    references = of_kind(stream, EventKind.REFERENCES)[0]["references"]
    assert len(references) == 2  # the grade kept both pages; the reranker had predicted only the first
    assert _text(stream) == "Retry with self.retry() [1]; beat schedules [2]."
    ahead, fresh = [r for r in gated.requests if r.stream]
    # Each was asked with its own contexts: the one ahead with the predicted page, the fresh one with both.
    assert ahead.messages[0][1].count("<context>\n[") == 1 and fresh.messages[0][1].count("<context>\n[") == 2
    assert of_kind(stream, EventKind.DONE)[0]["timings"]["speculation_discarded"] == 1
    eventually(lambda: len(with_llm.stream_outcomes) == 2, "both answer streams to end")
    assert sum(o.client_disconnected for o in with_llm.stream_outcomes) == 1


def test_a_failing_answer_made_ahead_is_the_same_error_event(indexed: Guru, gated: GradeAfterTheAnswerStarts) -> None:
    gated.push(grades(0.9), *[ScriptedReply(status=500, stream=True)] * 4)
    stream = ask(indexed)
    assert stream[-1].kind is EventKind.ERROR and stream[-1].data["code"] == "model_unavailable"
    assert not of_kind(stream, EventKind.DELTA)
    assert "Scripted failure (HTTP 500)" in Question.objects.get().error_detail


def test_a_failing_grade_cancels_the_answer_made_ahead(indexed: Guru, gated: GradeAfterTheAnswerStarts,
                                                      with_llm: OpenAIFakeServer) -> None:
    gated.push(ScriptedReply(status=401, stream=False), SLOW)  # 401: not retried
    stream = ask(indexed)
    assert stream[-1].kind is EventKind.ERROR and not of_kind(stream, EventKind.DELTA)
    eventually(lambda: len(with_llm.stream_outcomes) == 1, "the answer stream to end")
    assert with_llm.stream_outcomes[0].client_disconnected


def test_the_question_asked_is_the_question_answered(indexed: Guru, gated: GradeAfterTheAnswerStarts) -> None:
    gated.push(grades(0.9), ScriptedReply(text="Call self.retry() [1].", stream=True))
    ask(indexed, QUESTION)
    (answer,) = [r for r in gated.requests if r.stream]
    assert answer.messages[-1] == ("user", QUESTION) and "[1] " in answer.messages[0][1]


def test_after_a_few_questions_the_prediction_follows_a_generous_grader(
    two_pages: Guru, gated: GradeAfterTheAnswerStarts
) -> None:
    every = ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(10)]})
    gated.push(every, ScriptedReply(text="Ahead [1].", stream=True), ScriptedReply(text="Again [1][2].", stream=True))
    first = ask(two_pages, "How do I retry a task?")
    assert of_kind(first, EventKind.DONE)[0]["timings"]["speculation_discarded"] == 1
    gated.push(every, ScriptedReply(text="Both pages [1][2].", stream=True))
    second = ask(two_pages, "How is a task retried after a countdown?")
    assert _text(second) == "Both pages [1][2]." and len(of_kind(second, EventKind.REFERENCES)[0]["references"]) == 2
    # The model keeps every context: the answer made ahead was made from both, and shown.
    assert of_kind(second, EventKind.DONE)[0]["timings"]["speculative_answer"] == 1
    assert [r.stream for r in gated.requests].count(True) == 3  # two for the first question, one for this
