"""Forms for a guru's overrides and the instance-wide settings, with the limits the pipeline needs."""

from __future__ import annotations

from typing import Any

from django import forms

from backend.core.models import Settings
from backend.core.selectors import settings_get
from backend.dashboard.gurus.summary_services import MAX_SUMMARY_BUDGET
from backend.dashboard.settings_page.selectors import (
    SplitDefaults,
    chat_model_check,
    chat_models_note,
    split_defaults,
)
from backend.gurus.models import Guru

MAX_HISTORY_TURNS = 20
MAX_MIN_CHARS = 2000
SPLIT_FIELDS = ("chunk_size", "chunk_overlap", "chunk_min_length")
DEFAULT_SUMMARY_BUDGET: int = Settings._meta.get_field("summary_token_budget").default


def _threshold(label: str, help_text: str, *, required: bool) -> forms.FloatField:
    return forms.FloatField(label=label, help_text=help_text, required=required,
                            min_value=0.0, max_value=1.0,
                            widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1"}))


def _clean_model(value: str, current: str, warnings: list[str]) -> str:
    """The stripped id; a new one must be offered by the provider (or be unverifiable, noted in `warnings`)."""
    model = value.strip()
    # An unchanged id is kept even if the provider changed since, so that saving other fields still works.
    if not model or model == current:
        return model
    check = chat_model_check(model)
    if check.problem:
        raise forms.ValidationError(check.problem)
    if check.warning:
        warnings.append(check.warning)
    return model


class GuruSettingsForm(forms.ModelForm):
    """A guru's threshold overrides (blank = the instance default), its chat model and its answering features."""

    rerank_threshold = _threshold("Rerank threshold", "0–1. Passages scoring below it are dropped before grading. "
                                  "Blank uses the instance default.", required=False)
    trust_score_threshold = _threshold("Trust score threshold", "0–1. Answers need a passage graded at least this; "
                                       "otherwise the guru refuses. Blank uses the instance default.",
                                       required=False)

    class Meta:
        model = Guru
        fields = ["rerank_threshold", "trust_score_threshold", "chat_model", "source_graph", "agentic", "memory",
                  "memory_from_conversations"]
        labels = {"chat_model": "Chat model", "source_graph": "Follow links between sources",
                  "agentic": "Research hard questions step by step",
                  "memory": "Answer with approved memory notes",
                  "memory_from_conversations": "Propose memory notes from conversations"}
        help_texts = {"chat_model": "Model id for this guru's answers; blank uses the instance default.",
                      "source_graph": "An answer may also quote a page or file that the best pages found link to, "
                                      "are linked from or import, when it is graded as relevant as they are.",
                      "agentic": "With a language model: a question the sources found do not support, or one that "
                                 "compares things, is researched with tool calls (search, read on, follow links, "
                                 "the summary; at most 4 steps) shown as it goes, then graded and answered.",
                      "memory": "Notes approved on the Memory tab are graded beside the sources and, when they "
                                "are about the question, quoted first as maintainer notes.",
                      "memory_from_conversations": "With a language model: after each answer it proposes notes "
                                                   "(a fact a user stated or corrected) on the Memory tab; none is "
                                                   "used before a maintainer approves it. One more model call per "
                                                   "answer."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.warnings: list[str] = []  # for the view to show once saved
        stored = settings_get()
        self.fields["rerank_threshold"].widget.attrs.update(placeholder=f"{stored.rerank_threshold:g}")
        self.fields["trust_score_threshold"].widget.attrs.update(placeholder=f"{stored.trust_score_threshold:g}")
        self.fields["chat_model"].help_text += f" {chat_models_note()}"

    def clean_chat_model(self) -> str:
        return _clean_model(self.cleaned_data.get("chat_model") or "", self.initial.get("chat_model") or "",
                            self.warnings)


class InstanceSettingsForm(forms.ModelForm):
    """Global thresholds, split sizes (blank = derived from the embedder) and answering defaults.

    The default answer model belongs to the chat provider form (llm_form.py): it is checked against the provider.
    """

    rerank_threshold = _threshold("Rerank threshold", "0–1, for every guru without its own.", required=True)
    trust_score_threshold = _threshold("Trust score threshold", "0–1, for every guru without its own.",
                                       required=True)
    chunk_size = forms.IntegerField(required=False, label="Chunk size (tokens)")
    chunk_overlap = forms.IntegerField(required=False, min_value=0, label="Chunk overlap (tokens)")
    chunk_min_length = forms.IntegerField(min_value=0, max_value=MAX_MIN_CHARS, label="Minimum chunk length",
                                          help_text="Characters; shorter fragments are dropped.")
    history_turns = forms.IntegerField(min_value=0, max_value=MAX_HISTORY_TURNS, label="History turns",
                                       help_text="Previous question/answer pairs a follow-up sees "
                                                 f"(0–{MAX_HISTORY_TURNS}).")
    summary_token_budget = forms.IntegerField(
        required=False, min_value=0, max_value=MAX_SUMMARY_BUDGET, label="Summary token budget",
        help_text=f"Tokens each guru's summaries may spend in all, unless the guru sets its own on its Overview tab. "
                  f"Blank uses {DEFAULT_SUMMARY_BUDGET:,}. Over budget the summaries stop growing; indexing goes on.",
        widget=forms.NumberInput(attrs={"min": "0", "step": "1", "placeholder": str(DEFAULT_SUMMARY_BUDGET)}),
    )

    class Meta:
        model = Settings
        fields = ["rerank_threshold", "trust_score_threshold", "chunk_size", "chunk_overlap", "chunk_min_length",
                  "history_turns", "summary_token_budget"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.defaults: SplitDefaults = split_defaults()
        self.fields["chunk_size"].help_text = (
            f"{self.defaults.min_size}–{self.defaults.max_size}. Blank derives {self.defaults.size} from the "
            f"embedder's {self.defaults.window}-token window."
        )
        self.fields["chunk_overlap"].help_text = (
            f"Less than half the chunk size. Blank uses 12 % of the size ({self.defaults.overlap} by default)."
        )
        self.fields["chunk_size"].widget.attrs.update(placeholder=str(self.defaults.size))
        self.fields["chunk_overlap"].widget.attrs.update(placeholder=str(self.defaults.overlap))

    def clean_chunk_size(self) -> int | None:
        size: int | None = self.cleaned_data.get("chunk_size")
        limits = self.defaults
        if size is not None and not limits.min_size <= size <= limits.max_size:
            raise forms.ValidationError(
                f"Use {limits.min_size}–{limits.max_size} tokens: the embedder reads {limits.window} tokens "
                "(less 2 special tokens), and chunks over 512 tokens retrieve worse."
            )
        return size

    def clean_summary_token_budget(self) -> int:
        budget: int | None = self.cleaned_data.get("summary_token_budget")
        return DEFAULT_SUMMARY_BUDGET if budget is None else budget

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        overlap = cleaned.get("chunk_overlap")
        if overlap is None or "chunk_size" in self.errors:
            return cleaned
        size = cleaned.get("chunk_size") or self.defaults.size
        if overlap >= size // 2:
            self.add_error("chunk_overlap", f"The overlap must be less than half the chunk size ({size} tokens): "
                                            f"at most {size // 2 - 1}.")
        return cleaned

    @property
    def split_changed(self) -> bool:
        """Whether the save changes how documents are split (existing chunks keep the old split until re-indexed)."""
        return any(name in self.changed_data for name in SPLIT_FIELDS)
