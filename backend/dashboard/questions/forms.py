"""The questions list's search and filter form (GET); every input is bounded."""

from __future__ import annotations

from django import forms

from backend.answering.models import Channel

STATUS_CHOICES = [("", "Answered and refused"), ("answered", "Answered"), ("refused", "Not covered")]
FEEDBACK_CHOICES = [("", "Any feedback"), ("up", "👍 Helpful"), ("down", "👎 Not helpful"), ("some", "With a vote"),
                    ("none", "Without a vote")]


class QuestionFilterForm(forms.Form):
    q = forms.CharField(label="Search", max_length=200, required=False,
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Search questions…"}))
    channel = forms.ChoiceField(choices=[("", "All channels"), *Channel.choices], required=False)
    status = forms.ChoiceField(label="Answer", choices=STATUS_CHOICES, required=False)
    feedback = forms.ChoiceField(choices=FEEDBACK_CHOICES, required=False)
    trust_below = forms.IntegerField(label="Trust below %", min_value=1, max_value=100, required=False,
                                     widget=forms.NumberInput(attrs={"placeholder": "e.g. 60"}))

    def filters(self) -> dict[str, object]:
        """The valid filters; an invalid one is dropped (and shown as an error) instead of failing the page."""
        self.is_valid()
        return {name: value for name, value in getattr(self, "cleaned_data", {}).items() if value not in ("", None)}
