"""A guru that opts in learns from conversations: after an answer, the worker asks its language model (the OpenAI
wire protocol, a fake server on 127.0.0.1) for structured updates and files them as proposals, revising the note
an update refines instead of adding a second one. A guru that does not opt in makes no such call."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.memory import memory_correct
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus, Question
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import ask, grades

pytestmark = pytest.mark.django_db

NOTE = "Retry a task with self.retry(countdown=30); since version 6 the countdown must be at least 30 seconds."


def _memory_requests(llm: OpenAIFakeServer) -> list[object]:
    return [r for r in llm.script.requests if r.json_schema and "updates" in r.json_schema.get("properties", {})]


def test_an_answer_teaches_the_memory_proposals_that_revise_instead_of_duplicating(
    indexed: Guru, with_llm: OpenAIFakeServer, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    # Learning on, answering from notes off (each has its own switch): the answer is the scripted one.
    Guru.objects.filter(pk=indexed.pk).update(memory_from_conversations=True, memory=False)
    indexed.refresh_from_db()
    seed = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q")
    note = memory_correct(question=seed, text=NOTE, author=None)
    updates = {"updates": [
        {"memory_id": None, "text": NOTE.replace("since version 6", "from version 6 on")},  # the same note again
        {"memory_id": 99_999, "text": "Retried tasks keep their original task id."},  # an id the guru lacks
        {"memory_id": note.pk, "text": "   "},  # nothing to store
    ]}
    with_llm.script.push(grades(0.9), ScriptedReply(text="Call self.retry() [1]."), ScriptedReply(json=updates))
    with django_capture_on_commit_callbacks(execute=True):
        ask(indexed, "How do I retry a task? We are on version 6 now.")

    [request] = _memory_requests(with_llm)
    prompt = request.messages[-1][1]  # type: ignore[attr-defined]
    assert f"[{note.pk}] {NOTE}" in prompt and "We are on version 6 now." in prompt and "self.retry()" in prompt
    note.refresh_from_db()
    assert note.status == MemoryStatus.APPROVED and note.text == NOTE and "from version 6 on" in note.proposed_text
    added = Memory.objects.exclude(pk=note.pk).get(guru=indexed)
    assert (added.text, added.status, added.origin) == ("Retried tasks keep their original task id.",
                                                        MemoryStatus.PROPOSED, MemoryOrigin.CONVERSATION)
    assert added.question is not None and added.question.user_question.endswith("version 6 now.")


def test_a_guru_that_does_not_opt_in_sends_no_conversation_to_the_model(
    indexed: Guru, with_llm: OpenAIFakeServer, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with_llm.script.push(grades(0.9), ScriptedReply(text="Call self.retry() [1]."))
    with django_capture_on_commit_callbacks(execute=True):
        ask(indexed, "How do I retry a task?")
    assert _memory_requests(with_llm) == [] and not Memory.objects.exists()
