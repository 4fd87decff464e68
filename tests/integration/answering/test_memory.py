"""The guru's memory through the real answer pipeline: a maintainer's correction is an approved note that the next
answer rests on and cites first; proposals and rejected notes are never retrieved; the model's proposals revise
the note they refine instead of adding a second one."""

from __future__ import annotations

from typing import Any

import pytest

from backend.answering.events import EventKind
from backend.answering.memory import (
    MAX_MEMORY_CHARS,
    Update,
    memory_approve,
    memory_correct,
    memory_propose,
    memory_reject,
)
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus, Question
from backend.gurus.models import Guru
from tests.integration.answering.answer_support import QUESTION, ask, of_kind

pytestmark = pytest.mark.django_db

CORRECTION = "Retry a task with self.retry(countdown=30); since version 6 the countdown must be at least 30 seconds."


def _answer(guru: Guru, question: str = QUESTION) -> tuple[str, list[dict[str, Any]]]:
    stream = ask(guru, question)
    text = "".join(str(d.get("text", "")) for d in of_kind(stream, EventKind.DELTA))
    return text, of_kind(stream, EventKind.DONE)[0]["references"]


def test_a_correction_becomes_an_approved_note_that_the_next_answer_rests_on(indexed: Guru) -> None:
    before, references = _answer(indexed)
    assert "at least 30 seconds" not in before and all(r["kind"] != "MEMORY" for r in references)
    question = Question.objects.filter(guru=indexed).latest("created_at")
    note = memory_correct(question=question, text=CORRECTION, author=None)
    assert (note.status, note.origin, note.question_id) == (MemoryStatus.APPROVED, MemoryOrigin.CORRECTION,
                                                            question.pk)

    after, references = _answer(indexed)  # not the cached answer: an approved note changes the sources' version
    assert "at least 30 seconds" in after
    assert references[0]["kind"] == "MEMORY" and references[0]["title"] == "Maintainer note"
    assert references[0]["link"] == "" and any(r["kind"] == "PDF" for r in references[1:])


def test_only_approved_notes_are_ever_retrieved(indexed: Guru) -> None:
    proposed = Memory.objects.create(guru=indexed, text=CORRECTION, status=MemoryStatus.PROPOSED)
    assert "at least 30 seconds" not in _answer(indexed)[0], "a proposal is not answered from"
    memory_reject(memory=proposed)
    assert "at least 30 seconds" not in _answer(indexed)[0], "nor a rejected note"
    memory_approve(memory=proposed)  # a maintainer changes their mind
    assert "at least 30 seconds" in _answer(indexed)[0]
    memory_reject(memory=proposed)
    assert "at least 30 seconds" not in _answer(indexed)[0]


def test_an_unrelated_note_is_not_quoted(indexed: Guru) -> None:
    question = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q")
    memory_correct(question=question, text="The office coffee machine is cleaned every Friday.", author=None)
    text, references = _answer(indexed)
    assert "coffee" not in text and all(r["kind"] != "MEMORY" for r in references)


def test_the_models_proposals_revise_the_note_they_refine_instead_of_duplicating_it(indexed: Guru) -> None:
    question = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q")
    note = memory_correct(question=question, text=CORRECTION, author=None)
    # The same fact in other words, as a new note: taken as a revision of the note it refines.
    revised = CORRECTION.replace("since version 6", "from version 6 on")
    touched = memory_propose(guru=indexed, updates=[Update(text=revised)])
    note.refresh_from_db()
    assert touched == [note] and Memory.objects.filter(guru=indexed).count() == 1
    assert (note.text, note.proposed_text, note.status) == (CORRECTION, revised, MemoryStatus.APPROVED)
    assert "at least 30 seconds" in _answer(indexed)[0], "the approved text answers until the revision is approved"
    memory_approve(memory=note)
    note.refresh_from_db()
    assert (note.text, note.proposed_text) == (revised, "")

    # A revision naming the note, and a note unlike any other: one revised, one proposed.
    other = "Periodic tasks are scheduled with celery beat, never with cron."
    memory_propose(guru=indexed, updates=[Update(text="Retries wait at least 30 seconds.", memory_id=note.pk),
                                          Update(text=other)])
    note.refresh_from_db()
    assert note.proposed_text == "Retries wait at least 30 seconds."
    new = Memory.objects.get(guru=indexed, text=other)
    assert (new.status, new.origin) == (MemoryStatus.PROPOSED, MemoryOrigin.CONVERSATION)
    memory_reject(memory=note)  # drops the revision only
    note.refresh_from_db()
    assert (note.status, note.proposed_text) == (MemoryStatus.APPROVED, "")


def test_a_note_is_bounded_and_never_empty(indexed: Guru) -> None:
    question = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q")
    with pytest.raises(ValueError):
        memory_correct(question=question, text="   ", author=None)
    long = memory_correct(question=question, text="x " * 2000, author=None)
    assert len(long.text) <= MAX_MEMORY_CHARS
    tagged = memory_correct(question=question, text="Use <script>alert(1)</script> never.", author=None)
    assert "<script>" not in tagged.text


def test_a_guru_that_turns_its_memory_off_answers_from_its_sources_only(indexed: Guru) -> None:
    question = Question.objects.create(guru=indexed, user_question="q", question="q", slug="q")
    memory_correct(question=question, text=CORRECTION, author=None)
    assert "at least 30 seconds" in _answer(indexed)[0]
    Guru.objects.filter(pk=indexed.pk).update(memory=False)
    indexed.refresh_from_db()
    text, references = _answer(indexed)  # not the cached answer: the switch is part of the answer's fingerprint
    assert "at least 30 seconds" not in text and all(r["kind"] != "MEMORY" for r in references)


def test_a_note_is_quoted_whole_even_when_it_starts_with_code(indexed: Guru) -> None:
    question = Question.objects.create(guru=indexed, user_question=QUESTION, question=QUESTION, slug="q")
    memory_correct(question=question, text="self.retry(countdown=30) is how a task retries. It waits 30 seconds.",
                   author=None)
    text = _answer(indexed)[0]
    assert "> self.retry(countdown=30) is how a task retries." in text and "…self.retry" not in text
