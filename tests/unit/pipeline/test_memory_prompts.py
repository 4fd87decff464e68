"""The memory prompt shows the existing notes by id and the conversation; the reply is read defensively."""

from __future__ import annotations

from backend.pipeline.memory_prompts import (
    MAX_NOTE_CHARS,
    MAX_UPDATES,
    ProposedUpdate,
    Turn,
    memory_messages,
    read_updates,
)


def test_the_prompt_names_each_note_by_id_and_quotes_the_conversation() -> None:
    messages = memory_messages("the Celery task queue", [Turn("How do I retry?", "Call self.retry() [1].")],
                               [(7, "Retries wait at least 30 seconds.")])
    assert "the Celery task queue" in messages[0].content
    assert "[7] Retries wait at least 30 seconds." in messages[1].content
    assert "User: How do I retry?\nGuru: Call self.retry() [1]." in messages[1].content
    assert "(none yet)" in memory_messages("x", [], [])[1].content


def test_updates_are_read_defensively() -> None:
    reply = {"updates": [
        {"memory_id": 7, "text": " Revised. "}, {"memory_id": 8, "text": "Unknown id: a new note."},
        {"memory_id": True, "text": "A boolean is no id."}, {"memory_id": None, "text": ""}, "junk",
        {"memory_id": None, "text": "x" * 5000}, {"memory_id": None, "text": "One too many."}]}
    assert read_updates(reply, {7}) == [
        ProposedUpdate("Revised.", 7), ProposedUpdate("Unknown id: a new note.", None),
        ProposedUpdate("A boolean is no id.", None)]
    assert len(read_updates({"updates": [{"memory_id": None, "text": f"n{i}"} for i in range(9)]}, set())) \
        == MAX_UPDATES
    assert read_updates({"updates": [{"memory_id": None, "text": "x" * 5000}]}, set())[0].text == "x" * MAX_NOTE_CHARS
    assert read_updates({}, set()) == [] and read_updates({"updates": "no"}, set()) == []
