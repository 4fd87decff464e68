"""Forms of the guru's memory: one note's text, on the Memory tab and as a correction on a question's page."""

from __future__ import annotations

from typing import Any

from django import forms

from backend.answering.memory import MAX_MEMORY_CHARS
from backend.answering.models import MemoryOrigin, Question

DISLIKED = -1  # Question.feedback of a 👎


class NoteForm(forms.Form):
    """A note's text; `label` and `help_text` name what the note is for on the page that shows the form."""

    text = forms.CharField(label="Note", max_length=MAX_MEMORY_CHARS,
                           widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, label: str = "", help_text: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["text"]
        field.label = label or field.label
        field.help_text = help_text


def add_form(data: Any = None) -> NoteForm:
    return NoteForm(data, label="Add a note", help_text=(
        f"A fact or correction in a sentence or a few (at most {MAX_MEMORY_CHARS} characters). It is approved "
        "at once: answers quote it when a question is about it."))


def resolves_feedback(question: Question) -> bool:
    """True when the answer got a 👎: a note on it resolves that vote rather than correcting unasked."""
    return question.feedback == DISLIKED


def correction_origin(question: Question) -> MemoryOrigin:
    return MemoryOrigin.FEEDBACK if resolves_feedback(question) else MemoryOrigin.CORRECTION


def correction_form(question: Question, data: Any = None) -> NoteForm:
    """The question page's form: a note that corrects the answer, or resolves its 👎."""
    label = "Resolve this 👎 with a note" if resolves_feedback(question) else "Correct this answer"
    return NoteForm(data, label=label, help_text=(
        "What the answer should have said. The note is approved at once and quoted, as a maintainer note, "
        "by the answers to this question and to others like it."))
