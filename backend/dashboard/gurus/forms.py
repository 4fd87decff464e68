"""Forms for creating and editing a guru."""

from __future__ import annotations

from django import forms

from backend.gurus.models import Guru

COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"


class GuruForm(forms.ModelForm):
    """The maintainer-editable fields of a guru; the model's validators apply (slug format, lengths)."""

    base_color = forms.RegexField(regex=COLOR_PATTERN, widget=forms.TextInput(attrs={"type": "color"}),
                                  error_messages={"invalid": "Use a colour like #1f6feb."})

    class Meta:
        model = Guru
        fields = ["name", "slug", "domain_knowledge", "intro_text", "base_color", "icon_url", "language",
                  "private", "active"]
        labels = {"intro_text": "Intro", "icon_url": "Icon URL", "domain_knowledge": "Domain knowledge"}
        help_texts = {
            "slug": "Lowercase letters, digits and hyphens; the guru page lives at /g/<slug>/.",
            "intro_text": "Shown above the question box on the guru page and in the widget.",
            "icon_url": "A square image (https) shown on the guru page and in the widget.",
            "active": "Inactive gurus refuse questions on every channel.",
        }
        widgets = {"domain_knowledge": forms.Textarea(attrs={"rows": 2}),
                   "intro_text": forms.Textarea(attrs={"rows": 3})}

    def clean_icon_url(self) -> str:
        url = self.cleaned_data["icon_url"].strip()
        if url and not url.startswith("https://"):
            # Pages served over https would block an http icon as mixed content.
            raise forms.ValidationError("Use an https:// address for the icon.")
        return url
