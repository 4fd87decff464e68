"""Forms of the Evaluation tab: sets, JSONL import, one item, seeding from questions, applying a threshold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile

from backend.answering.feedback import MAX_ID
from backend.evaluation.models import MAX_QUESTION_CHARS, RefusalKind
from backend.evaluation.sets import MAX_ENTRY_CHARS, MAX_FILE_BYTES, MAX_LIST, SetFileError, parse_jsonl
from backend.pipeline.evaluation import EvalCase

MAX_NAME = 100
MAX_CATEGORY = 40
MAX_SEED = 100
"""Questions added to a set at once: two pages of the Questions tab."""
# A box of lines may hold MAX_LIST entries of MAX_ENTRY_CHARS, plus line breaks and blank lines around them.
MAX_LINES_CHARS = MAX_LIST * (MAX_ENTRY_CHARS + 2) + 200
IMPORT_MODES = [("append", "Add to the set's questions"), ("replace", "Replace the set's questions")]


class SetNameField(forms.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", MAX_NAME)
        kwargs.setdefault("widget", forms.TextInput(attrs={"maxlength": MAX_NAME, "autocomplete": "off"}))
        super().__init__(**kwargs)


class SetCreateForm(forms.Form):
    name = SetNameField(label="Name", help_text="For example “smoke” or “release checks”.")


class SetImportForm(forms.Form):
    """A JSONL file or pasted text, read into cases (a SetFileError is shown on the field it came from)."""

    name = SetNameField(label="Set", help_text="An existing set's name adds to it (or replaces it); a new name "
                                               "creates the set.",
                        widget=forms.TextInput(attrs={"maxlength": MAX_NAME, "list": "eval-set-names",
                                                      "autocomplete": "off"}))
    mode = forms.ChoiceField(label="Questions already in the set", choices=IMPORT_MODES, initial="append",
                             widget=forms.RadioSelect)
    file = forms.FileField(label="JSONL file", required=False,
                           widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.json,.txt,application/json"}))
    text = forms.CharField(label="…or paste the JSONL", required=False, max_length=MAX_FILE_BYTES, strip=False,
                           widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
                           help_text='One JSON object a line: {"question": …, "expected_sources": […], '
                                     '"expected_facts": […], "refusal_kind": "" | "unrelated" | "near_miss", '
                                     '"category": …, "history": […]}.')

    def __init__(self, *args: Any, fixed_name: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fixed_name = fixed_name
        if fixed_name:  # the set page imports into its own set
            del self.fields["name"]

    def _read_file(self, upload: UploadedFile) -> str | None:
        # The size comes from the bytes Django received, not from a header the client sent.
        if (upload.size or 0) > MAX_FILE_BYTES:
            self.add_error("file", f"The file is larger than {MAX_FILE_BYTES // 1_000_000} MB.")
            return None
        try:
            return upload.read(MAX_FILE_BYTES + 1).decode("utf-8-sig")
        except UnicodeDecodeError:
            self.add_error("file", "The file is not UTF-8 text.")
            return None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload, text = cleaned.get("file"), cleaned.get("text") or ""
        if upload and text.strip():
            raise forms.ValidationError("Choose a file or paste the text, not both.")
        if not upload and not text.strip():
            raise forms.ValidationError("Choose a JSONL file or paste its lines.")
        field = "file" if upload else "text"
        content = self._read_file(upload) if upload else text
        if content is None:
            return cleaned
        try:
            cleaned["cases"] = parse_jsonl(content)
        except SetFileError as exc:
            self.add_error(field, exc.detail)
        return cleaned

    def set_name(self) -> str:
        return self.fixed_name or str(self.cleaned_data["name"]).strip()

    def cases(self) -> list[EvalCase]:
        cases: list[EvalCase] = self.cleaned_data["cases"]
        return cases


def lines_field(label: str, help_text: str) -> forms.CharField:
    return forms.CharField(label=label, help_text=help_text, required=False, max_length=MAX_LINES_CHARS,
                           widget=forms.Textarea(attrs={"rows": 3}))


class ItemForm(forms.Form):
    """One question of a set; expected sources, facts and earlier questions are edited one per line."""

    question = forms.CharField(label="Question", max_length=MAX_QUESTION_CHARS,
                               widget=forms.Textarea(attrs={"rows": 2, "maxlength": MAX_QUESTION_CHARS}))
    category = forms.CharField(label="Category", required=False, max_length=MAX_CATEGORY,
                               widget=forms.TextInput(attrs={"maxlength": MAX_CATEGORY}),
                               help_text="A free label (lexical, semantic, multi-page…); results are split by it.")
    refusal_kind = forms.ChoiceField(label="Expected outcome", choices=RefusalKind.choices, required=False)
    expected_sources = lines_field("Expected sources", "One per line: a page title, a link, a path or the end of "
                                                       "one. A right answer cites any of them.")
    expected_facts = lines_field("Expected facts", "One per line: a short phrase a right answer contains.")
    history = lines_field("Earlier questions", "One per line, asked first in the same conversation (for "
                                               "follow-ups).")

    @staticmethod
    def initial_for(values: dict[str, Any]) -> dict[str, Any]:
        """Form values from an item's fields (lists become lines)."""
        return {name: "\n".join(value) if isinstance(value, list) else value for name, value in values.items()}

    def _lines(self, name: str) -> list[str]:
        lines = [line.strip() for line in str(self.cleaned_data.get(name) or "").splitlines() if line.strip()]
        if len(lines) > MAX_LIST:
            raise forms.ValidationError(f"At most {MAX_LIST} lines; this has {len(lines)}.")
        if too_long := [i for i, line in enumerate(lines, start=1) if len(line) > MAX_ENTRY_CHARS]:
            raise forms.ValidationError(f"Line {too_long[0]} is longer than {MAX_ENTRY_CHARS} characters.")
        return lines

    def clean_expected_sources(self) -> list[str]:
        return self._lines("expected_sources")

    def clean_expected_facts(self) -> list[str]:
        return self._lines("expected_facts")

    def clean_history(self) -> list[str]:
        return self._lines("history")

    def clean_question(self) -> str:
        return str(self.cleaned_data["question"]).strip()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("refusal_kind") and (cleaned.get("expected_sources") or cleaned.get("expected_facts")):
            raise forms.ValidationError("A question that should be refused has no expected sources or facts: "
                                        "empty them, or choose “Should be answered”.")
        return cleaned

    def case(self) -> EvalCase:
        data = self.cleaned_data
        return EvalCase(question=data["question"], expected_sources=tuple(data["expected_sources"]),
                        expected_facts=tuple(data["expected_facts"]), refusal_kind=data.get("refusal_kind") or "",
                        category=str(data.get("category") or "").strip(), history=tuple(data["history"]))


class SeedIdsField(forms.Field):
    """Repeated `ids` values as integers; whether they are the guru's answered questions is checked when adding."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"required": "Tick at least one question.", "invalid": "That selection is not valid."}

    def to_python(self, value: Any) -> list[int]:
        values = list(value or [])
        if len(values) > MAX_SEED:
            raise forms.ValidationError(f"Add at most {MAX_SEED} questions at a time.")
        if not all(str(v).isdigit() and 0 < int(v) <= MAX_ID for v in values):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return list(dict.fromkeys(int(v) for v in values))


NEW_SET = "new"


class SeedForm(forms.Form):
    """Where the questions ticked on the Questions tab go: one of the guru's sets, or a new one."""

    ids = SeedIdsField()
    eval_set = forms.ChoiceField(label="Evaluation set")
    new_name = SetNameField(label="New set's name", required=False)

    def __init__(self, *args: Any, sets: Sequence[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(str(pk), name) for pk, name in sets]
        field = cast(forms.ChoiceField, self.fields["eval_set"])
        field.choices = [*choices, (NEW_SET, "A new set…")]
        field.initial = choices[0][0] if choices else NEW_SET

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("eval_set") == NEW_SET and not str(cleaned.get("new_name") or "").strip():
            self.add_error("new_name", "Name the new set.")
        return cleaned

    def chosen_set_id(self) -> int | None:
        choice = self.cleaned_data["eval_set"]
        return None if choice == NEW_SET else int(choice)


class ThresholdForm(forms.Form):
    """A trust threshold among the points of the run's sweep (no other value can be posted)."""

    threshold = forms.TypedChoiceField(label="Trust threshold", coerce=float)

    def __init__(self, *args: Any, thresholds: Sequence[float], current: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.TypedChoiceField, self.fields["threshold"])
        field.choices = [(f"{t:.2f}", f"{t:.2f}") for t in thresholds]
        nearest = min(thresholds, key=lambda t: abs(t - current)) if thresholds else None
        field.initial = f"{nearest:.2f}" if nearest is not None else None
