"""The prompt that asks a language model what a conversation teaches the guru's memory, and the reading of its
reply: structured updates to the existing notes (revise one, or add one), never a free-form list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backend.pipeline.llm_types import Message, Role

MAX_UPDATES = 3
MAX_NOTE_CHARS = 1000
MAX_TURN_CHARS = 2000
MEMORY_MAX_TOKENS = 600
MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"updates": {"type": "array", "items": {
        "type": "object",
        "properties": {"memory_id": {"type": ["integer", "null"]}, "text": {"type": "string"}},
        "required": ["memory_id", "text"], "additionalProperties": False}}},
    "required": ["updates"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Turn:
    """One question of the conversation and the guru's answer to it."""

    question: str
    answer: str


@dataclass(frozen=True)
class ProposedUpdate:
    """A note to add (memory_id None) or the new text of note `memory_id`."""

    text: str
    memory_id: int | None


def memory_messages(subject: str, turns: Sequence[Turn], notes: Sequence[tuple[int, str]]) -> list[Message]:
    """Ask for what the conversation establishes that the guru's answers should know next time: facts a user
    states or corrects about the subject, not their questions; each as a revision of the note it refines when
    one exists."""
    system = (f"You keep the memory of a knowledge base about {subject}: short, self-contained notes its answers "
              "use beside its documents. From the conversation, propose at most three updates: a fact about the "
              "subject that the user states, corrects or confirms (a version change, a renamed setting, a known "
              "workaround), written as one or two plain sentences. When an existing note covers the same thing, "
              "give its id and its whole new text; otherwise give null as the id. Never repeat an existing note, "
              "never store a question, an opinion, or anything about the user. Return no updates when the "
              "conversation teaches nothing lasting.")
    existing = "\n".join(f"[{note_id}] {text}" for note_id, text in notes) or "(none yet)"
    conversation = "\n\n".join(f"User: {t.question[:MAX_TURN_CHARS]}\nGuru: {t.answer[:MAX_TURN_CHARS]}"
                               for t in turns)
    user = f"Existing notes:\n{existing}\n\nConversation:\n{conversation}"
    return [Message(Role.SYSTEM, system), Message(Role.USER, user)]


def read_updates(data: dict[str, Any], known: set[int]) -> list[ProposedUpdate]:
    """The reply's updates, at most MAX_UPDATES, each with some text; an id the guru does not hold counts as a new
    note (the model may not invent a note to overwrite)."""
    found: list[ProposedUpdate] = []
    updates = data.get("updates") if isinstance(data, dict) else None
    for item in updates if isinstance(updates, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            continue
        memory_id = item.get("memory_id")
        valid = isinstance(memory_id, int) and not isinstance(memory_id, bool) and memory_id in known
        found.append(ProposedUpdate(text=item["text"].strip()[:MAX_NOTE_CHARS], memory_id=memory_id if valid else None))
        if len(found) >= MAX_UPDATES:
            break
    return found
