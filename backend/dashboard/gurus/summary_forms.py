"""Forms of the Overview tab's Summary card: the guru's token budget, and the drafted suggestion to approve."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.forms import BoundField

from backend.dashboard.gurus.summary_services import MAX_DOMAIN_KNOWLEDGE, MAX_SUMMARY_BUDGET
from backend.gurus.examples import InvalidExample, example_text_clean
from backend.gurus.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES

# A draft has 5–10 questions; a posted form never grows more fields than this, whatever it sends.
MAX_DRAFT_QUESTIONS = MAX_EXAMPLES


class SummaryBudgetForm(forms.Form):
    """The guru's own summary token budget; empty goes back to the instance default."""

    summary_token_budget = forms.IntegerField(
        required=False, min_value=0, max_value=MAX_SUMMARY_BUDGET, label="Token budget for summaries",
        widget=forms.NumberInput(attrs={"min": "0", "step": "1"}),
        error_messages={"invalid": "Enter a whole number of tokens (or leave it empty for the instance default)."},
    )

    def __init__(self, *args: Any, default: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["summary_token_budget"]
        field.widget.attrs["placeholder"] = str(default)
        field.help_text = (f"Empty uses the instance default ({default:,} tokens). Over budget the summaries stop "
                           "growing; indexing and answering go on.")


def _posted_count(data: Mapping[str, Any]) -> int:
    count = 0
    while count < MAX_DRAFT_QUESTIONS and f"question_{count}" in data:
        count += 1
    return count


class SuggestionForm(forms.Form):
    """A draft from the guru's summary: its domain knowledge and example questions, each ticked to approve."""

    save_domain_knowledge = forms.BooleanField(required=False, initial=True,
                                               label="Replace the domain knowledge with this text")
    domain_knowledge = forms.CharField(required=False, label="Domain knowledge",
                                       widget=forms.Textarea(attrs={"rows": 4, "maxlength": MAX_DOMAIN_KNOWLEDGE}))
    drafted_by = forms.CharField(required=False, widget=forms.HiddenInput)
    """Who drafted it, carried from Suggest to a re-shown form; only ever displayed (escaped)."""

    def __init__(self, data: Mapping[str, Any] | None = None, *, questions: Sequence[str] = (),
                 **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        count = _posted_count(data) if data is not None else min(len(questions), MAX_DRAFT_QUESTIONS)
        for index in range(count):
            self.fields[f"question_{index}"] = forms.CharField(
                required=False, label=f"Question {index + 1}",
                initial=questions[index] if index < len(questions) else "",
                widget=forms.TextInput(attrs={"maxlength": MAX_EXAMPLE_CHARS, "aria-label": f"Question {index + 1}"}))
            self.fields[f"keep_{index}"] = forms.BooleanField(
                required=False, initial=True, label=f"Approve question {index + 1}",
                widget=forms.CheckboxInput(attrs={"aria-label": f"Approve question {index + 1}"}))
        self.count = count

    def question_rows(self) -> list[tuple[BoundField, BoundField]]:
        """(tick box, text) of each drafted question, for the template."""
        return [(self[f"keep_{index}"], self[f"question_{index}"]) for index in range(self.count)]

    def clean_drafted_by(self) -> str:
        return str(self.cleaned_data.get("drafted_by") or "")[:200]

    def clean_domain_knowledge(self) -> str:
        return str(self.cleaned_data.get("domain_knowledge") or "").strip()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("save_domain_knowledge"):
            text = cleaned.get("domain_knowledge", "")
            if not text:
                self.add_error("domain_knowledge", "Write the domain knowledge, or untick the box above to keep "
                                                   "the current text.")
            elif len(text) > MAX_DOMAIN_KNOWLEDGE:
                self.add_error("domain_knowledge", f"At most {MAX_DOMAIN_KNOWLEDGE} characters; this has "
                                                   f"{len(text)}.")
        for index in range(self.count):
            if cleaned.get(f"keep_{index}"):
                try:
                    cleaned[f"question_{index}"] = example_text_clean(cleaned.get(f"question_{index}", ""))
                except InvalidExample as exc:
                    self.add_error(f"question_{index}", f"{exc.detail} (or untick it)")
        return cleaned

    def approved_questions(self) -> list[str]:
        values = self.cleaned_data
        return [str(values.get(f"question_{index}", "")) for index in range(self.count) if values.get(f"keep_{index}")]

    def domain_knowledge_value(self) -> str | None:
        """The text to save, or None to keep the guru's current domain knowledge."""
        return self.cleaned_data["domain_knowledge"] if self.cleaned_data.get("save_domain_knowledge") else None
