"""Cited vs also retrieved, through the real answer flow (Milvus Lite, local embeddings, the OpenAI fake):
the text's markers renumbered [1]..[k], uncited references kept apart, one reference per content."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.adapters.llm.fake import ScriptedReply
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.answering.events import EventKind
from backend.answering.models import Citation, Question
from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import RETRY_PAGES, add_retry_sources, ask, of_kind

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

QUESTION = "How do I retry a task?"
ANSWER = "Call self.retry() in the task [1]. Cap the attempts with max_retries [3]."
RENUMBERED = "Call self.retry() in the task [1]. Cap the attempts with max_retries [2]."


@pytest.fixture
def four_sources_and_a_copy(milvus: MilvusVectorStore, settings: SettingsWrapper,
                            django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    """Four one-page manuals about retries, and a fifth source holding the first one's text again."""
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    cache.clear()
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="retries", name="Retry Guru", domain_knowledge="retrying Celery tasks")
    add_retry_sources(guru, django_capture_on_commit_callbacks)
    guru.maintainers.add(UserFactory(username="keeper"))
    return guru


def _script(llm: OpenAIFakeServer) -> None:
    every = ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(10)]})
    # One answer made ahead from the predicted contexts, one more if the grade keeps others: both cite [1], [3].
    llm.script.push(every, *[ScriptedReply(text=ANSWER, chunks=9, stream=True)] * 2)


def test_cited_references_come_first_renumbered_and_duplicates_are_one(
    four_sources_and_a_copy: Guru, with_llm: OpenAIFakeServer
) -> None:
    _script(with_llm)
    stream = ask(four_sources_and_a_copy, QUESTION)
    retrieved = of_kind(stream, EventKind.REFERENCES)[0]["references"]
    # The copy is folded into the original: four references, the first naming the other source.
    assert sorted(r["title"].split(" — ")[0] for r in retrieved) == sorted(RETRY_PAGES)
    (twin,) = [r for r in retrieved if r["title"].startswith("Retrying")]
    assert [m["title"].split(" — ")[0] for m in twin["also_in"]] == ["Retrying (copy)"]
    assert [r["n"] for r in retrieved] == [1, 2, 3, 4] and not any(r["cited"] for r in retrieved)
    (grade,) = [r for r in with_llm.script.requests if r.json_schema is not None]
    assert grade.messages[-1][1].count("<context id=") == 4  # the grader saw distinct contexts only
    answer = [r for r in with_llm.script.requests if r.stream][-1]
    assert answer.messages[0][1].count("<context>\n[") == 4 and "Retrying (copy)" not in answer.messages[0][1]

    text = "".join(d["text"] for d in of_kind(stream, EventKind.DELTA))
    assert text == RENUMBERED
    final = [{**retrieved[0], "n": 1, "cited": True}, {**retrieved[2], "n": 2, "cited": True},
             {**retrieved[1], "n": 3, "cited": False}, {**retrieved[3], "n": 4, "cited": False}]
    done = of_kind(stream, EventKind.DONE)[0]
    assert done["references"] == final == of_kind(stream, EventKind.REFERENCES)[-1]["references"]
    _each_marker_is_explained_before_it_streams(stream)
    question = Question.objects.get(pk=done["question_id"])
    assert question.content == RENUMBERED and question.references == final
    # Only cited sources are citations (what analytics counts).
    cited_sources = {retrieved[0]["source_id"], retrieved[2]["source_id"]}
    assert set(Citation.objects.filter(question=question).values_list("source_id", flat=True)) == cited_sources

    data = _api(four_sources_and_a_copy).post("/api/v1/retries/answer/", {"question": QUESTION,
                                                                           "fetch_existing": True}, format="json")
    body = data.json()
    assert body["content"] == RENUMBERED
    assert [(r["n"], r["cited"], r["title"]) for r in body["references"]] == [(1, True, final[0]["title"]),
                                                                             (2, True, final[1]["title"])]
    assert [(r["n"], r["cited"]) for r in body["also_retrieved"]] == [(3, False), (4, False)]
    assert set(body["references"][0]) >= {"title", "link", "icon"}  # what Gurubase clients read


def _each_marker_is_explained_before_it_streams(stream: list[Any]) -> None:
    """A `references` event marking [n] cited precedes the delta that first shows [n]."""
    cited: set[int] = set()
    for event in stream:
        if event.kind is EventKind.REFERENCES:
            cited = {r["n"] for r in event.data["references"] if r["cited"]}
        elif event.kind is EventKind.DELTA:
            shown = {n for n in (1, 2, 3, 4) if f"[{n}]" in event.data["text"]}
            assert shown <= cited, (event.data, cited)


def _api(guru: Guru) -> APIClient:
    client = APIClient()
    key = api_key_create(user=guru.maintainers.get(), name="t", guru=guru, rate_limit_per_minute=100).raw
    client.credentials(HTTP_X_API_KEY=key)
    return client


def test_the_offline_answerer_cites_its_quoted_passages_and_the_rest_is_also_retrieved(
    four_sources_and_a_copy: Guru
) -> None:
    stream = ask(four_sources_and_a_copy, QUESTION)
    done = of_kind(stream, EventKind.DONE)[0]
    text = "".join(d["text"] for d in of_kind(stream, EventKind.DELTA))
    cited = [r for r in done["references"] if r["cited"]]
    # It quotes its three best passages, each as [n], in order; the fourth is retrieved but not quoted.
    assert [r["n"] for r in cited] == [1, 2, 3] and all(f"[{n}]" in text for n in (1, 2, 3))
    assert [r["cited"] for r in done["references"]] == [True, True, True, False] and "[4]" not in text
    assert Question.objects.get(pk=done["question_id"]).content == text
