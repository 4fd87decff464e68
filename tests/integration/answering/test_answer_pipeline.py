"""The answer pipeline on a real small corpus: grounded answers, honest refusals, sessions, cache, LLM."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.answering.events import AnswerEvent, EventKind
from backend.answering.models import Binge, Question
from backend.answering.services import NOT_COVERED, AskRequest, answer_stream
from backend.gurus.models import Guru
from backend.pipeline.answerer_offline import NO_LLM_NOTICE
from backend.sources.models import SourceKind
from backend.sources.services import source_create, source_schedule_index
from tests.factories import GuruFactory
from tests.fakes.openai_server import FAKE_CHAT_MODEL, OpenAIFakeServer
from tests.fakes.pdfs import pdf_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

CORPUS = [
    ["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
     "The countdown argument sets how many seconds to wait before the retry.",
     "max_retries limits how many times a task is retried before it fails for good."],
    ["Choosing a broker", "Celery needs a message broker to send and receive messages.",
     "RabbitMQ and Redis are the supported brokers for production use.",
     "The broker URL is configured with the broker_url setting."],
    ["Periodic tasks", "celery beat is a scheduler that kicks off tasks at regular intervals.",
     "Schedules are defined in the beat_schedule setting with a crontab or a timedelta.",
     "Only one beat scheduler may run for a schedule, otherwise tasks are duplicated."],
]


@pytest.fixture
def corpus_guru(milvus: MilvusVectorStore, settings: SettingsWrapper,
                django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    """A guru over a small Celery manual, embedded with the real local MiniLM model."""
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    with django_capture_on_commit_callbacks(execute=True):
        guru = GuruFactory(slug="celery", name="Celery Guru", domain_knowledge="the Celery task queue for Python")
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(CORPUS), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Celery manual")
    return guru


def ask(guru: Guru, question: str, session_id: str | None = None) -> list[AnswerEvent]:
    return list(answer_stream(AskRequest(guru=guru, question=question, channel="WEB", session_id=session_id)))


def by_kind(stream: list[AnswerEvent], kind: EventKind) -> list[dict]:  # type: ignore[type-arg]
    return [e.data for e in stream if e.kind is kind]


def text_of(stream: list[AnswerEvent]) -> str:
    return "".join(d["text"] for d in by_kind(stream, EventKind.DELTA))


def test_a_covered_question_streams_one_call_with_ids_references_and_trust(corpus_guru: Guru) -> None:
    stream = ask(corpus_guru, "how do I retry a task after a few seconds")
    kinds = [e.kind for e in stream]
    assert kinds[0] is EventKind.QUESTION and kinds[-1] is EventKind.DONE
    assert kinds.index(EventKind.REFERENCES) < kinds.index(EventKind.DELTA)
    references = by_kind(stream, EventKind.REFERENCES)[0]
    assert references["references"][0] == {**references["references"][0], "n": 1, "kind": "PDF", "locator": "page 1"}
    assert references["trust_score"] >= 0.5
    text = text_of(stream)
    assert text.startswith(NO_LLM_NOTICE) and "self.retry()" in text and "[1]" in text
    done = by_kind(stream, EventKind.DONE)[0]
    question = Question.objects.get(pk=done["question_id"])
    assert question.content == text and question.trust_score == references["trust_score"]
    # The first `references` event lists what was retrieved; later ones (and `done`) mark what the text cites.
    final = by_kind(stream, EventKind.REFERENCES)[-1]["references"]
    assert question.references == final == done["references"] and not question.out_of_context
    assert [r["n"] for r in final] == [r["n"] for r in references["references"]] and final[0]["cited"]
    assert {"retrieve_ms", "grade_ms", "generate_ms", "total_ms", "search_ms"} <= set(question.timings)


@pytest.mark.parametrize("question", [
    "What is the capital of Peru?", "Give me a recipe for banana bread", "Who won the 1998 football world cup?",
])
def test_off_topic_questions_are_refused_and_recorded(corpus_guru: Guru, question: str) -> None:
    stream = ask(corpus_guru, question)
    assert text_of(stream) == NOT_COVERED.format(guru="Celery Guru")
    done = by_kind(stream, EventKind.DONE)[0]
    assert done["out_of_context"] and done["references"] == [] and done["trust_score"] == 0.0
    assert Question.objects.get(pk=done["question_id"]).out_of_context


def test_follow_ups_continue_the_session_with_history(corpus_guru: Guru) -> None:
    first = ask(corpus_guru, "How do I retry a task?")
    session_id = by_kind(first, EventKind.QUESTION)[0]["session_id"]
    second = ask(corpus_guru, "and how many times at most?", session_id=session_id)
    assert by_kind(second, EventKind.QUESTION)[0]["session_id"] == session_id
    assert "max_retries" in text_of(second)
    follow_up = Question.objects.get(pk=by_kind(second, EventKind.DONE)[0]["question_id"])
    assert follow_up.binge_id is not None and str(follow_up.binge_id) == session_id
    assert follow_up.parent_id == by_kind(first, EventKind.DONE)[0]["question_id"]
    assert Binge.objects.get(pk=session_id).root_question_id == follow_up.parent_id


def test_an_unknown_session_is_an_error_event(corpus_guru: Guru) -> None:
    stream = ask(corpus_guru, "How do I retry?", session_id="00000000-0000-0000-0000-000000000000")
    assert [e.kind for e in stream] == [EventKind.ERROR] and stream[0].data["code"] == "not_found"


def test_greetings_skip_retrieval(corpus_guru: Guru) -> None:
    stream = ask(corpus_guru, "hello")
    assert EventKind.REFERENCES not in [e.kind for e in stream]
    assert "Celery Guru" in text_of(stream)


def test_repeats_are_served_from_cache_until_a_source_changes(
    corpus_guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    first = by_kind(ask(corpus_guru, "How do I retry a task?"), EventKind.DONE)[0]
    again = by_kind(ask(corpus_guru, "how do I retry a task?"), EventKind.DONE)[0]
    assert again["timings"].get("cache_hit") == 1 and again["references"] == first["references"]
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=corpus_guru.sources.get())
    fresh = by_kind(ask(corpus_guru, "How do I retry a task?"), EventKind.DONE)[0]
    assert "cache_hit" not in fresh["timings"]


@pytest.fixture
def with_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    settings.OPENGURU_LLM = openai_server.llm_settings()
    yield openai_server


def test_with_an_llm_one_grading_call_then_the_streamed_answer(corpus_guru: Guru, with_llm: OpenAIFakeServer) -> None:
    with_llm.script.push(
        ScriptedReply(json={"grades": [{"id": i, "score": 0.9 if i == 0 else 0.1} for i in range(10)]}),
        ScriptedReply(text="Call self.retry() with a countdown [1].", chunks=4),
    )
    stream = ask(corpus_guru, "How do I retry a task?")
    assert text_of(stream) == "Call self.retry() with a countdown [1]."
    assert len(with_llm.script.requests) == 2  # no understand call before the first token of a first question
    # The grade and the answer run side by side, so they reach the fake in either order.
    (grade_request,) = [r for r in with_llm.script.requests if r.json_schema is not None]
    (answer_request,) = [r for r in with_llm.script.requests if r.stream]
    assert "[1] " in answer_request.messages[0][1]  # numbered contexts in the system prompt
    done = by_kind(stream, EventKind.DONE)[0]
    # The trust score combines the model's grade with how well the evidence covers the question's terms.
    assert done["trust_score"] >= 0.9 and set(done["usage"]) == {"grade", "answer"}


def test_when_the_llm_fails_the_client_gets_an_error_event(corpus_guru: Guru, with_llm: OpenAIFakeServer) -> None:
    with_llm.script.push(*[ScriptedReply(status=401)] * 3)
    stream = ask(corpus_guru, "How do I retry a task?")
    assert stream[-1].kind is EventKind.ERROR and stream[-1].data["code"] == "model_unavailable"


def test_the_answer_records_its_cost_from_the_token_counts(
    corpus_guru: Guru, with_llm: OpenAIFakeServer, settings: SettingsWrapper
) -> None:
    settings.OPENGURU_MODEL_PRICES = {FAKE_CHAT_MODEL: {"input": 1.0, "output": 2.0}}  # USD per million tokens
    with_llm.script.push(
        ScriptedReply(json={"grades": [{"id": i, "score": 0.9 if i == 0 else 0.1} for i in range(10)]},
                      prompt_tokens=1000, completion_tokens=50),
        ScriptedReply(text="Call self.retry() [1].", prompt_tokens=3000, completion_tokens=200),
    )
    done = by_kind(ask(corpus_guru, "How do I retry a task?"), EventKind.DONE)[0]
    # (1000 + 3000) × 1 + (50 + 200) × 2 = 4500 per million tokens
    assert Question.objects.get(pk=done["question_id"]).cost_usd == Decimal("0.004500")


def test_a_refused_question_is_embedded_in_the_background_for_the_gaps_page(
    corpus_guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    from backend.adapters import registry

    with django_capture_on_commit_callbacks(execute=True) as scheduled:
        refused = by_kind(ask(corpus_guru, "What is the capital of Peru?"), EventKind.DONE)[0]
        answered = by_kind(ask(corpus_guru, "How do I retry a task?"), EventKind.DONE)[0]
    assert len(scheduled) == 1  # only the refusal queues work
    stored = Question.objects.get(pk=refused["question_id"])
    assert stored.embedding_model == registry.embedder_id() and len(bytes(stored.embedding)) == 384 * 4
    assert Question.objects.get(pk=answered["question_id"]).embedding is None


def test_citations_are_recorded_once_per_cited_source(corpus_guru: Guru) -> None:
    from backend.answering.models import Citation

    answered = by_kind(ask(corpus_guru, "How do I retry a task?"), EventKind.DONE)[0]
    cited = {r["source_id"] for r in answered["references"]}
    rows = Citation.objects.filter(question_id=answered["question_id"])
    assert cited and {c.source_id for c in rows} == cited and rows.count() == len(cited)
    assert all(c.guru_id == corpus_guru.pk for c in rows)
    refused = by_kind(ask(corpus_guru, "What is the capital of Peru?"), EventKind.DONE)[0]
    assert not Citation.objects.filter(question_id=refused["question_id"]).exists()


def test_the_migration_backfills_citations_from_stored_references(corpus_guru: Guru) -> None:
    import importlib

    from django.apps import apps

    from backend.answering.models import Citation

    question = Question.objects.create(guru=corpus_guru, user_question="q", question="q", slug="old-q", references=[
        {"n": 1, "source_id": 7, "title": "Seven"}, {"n": 2, "source_id": 7}, {"n": 3, "title": "No id"}])
    importlib.import_module("backend.answering.migrations.0003_citation").backfill(apps, None)
    assert list(Citation.objects.filter(question=question).values_list("source_id", "title")) == [(7, "Seven")]
