"""Forms for creating and editing a guru."""

from __future__ import annotations

from typing import Any

from django import forms

from backend.gurus.icons import MAX_ICON_BYTES, icon_format
from backend.gurus.models import SLUG_PATTERN, Guru, slug_validator

COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"


class GuruForm(forms.ModelForm):
    """The maintainer-editable fields of a guru; the model's validators apply (slug format, lengths)."""

    slug = forms.RegexField(regex=SLUG_PATTERN, max_length=50, error_messages={"invalid": slug_validator.message})
    base_color = forms.RegexField(regex=COLOR_PATTERN, widget=forms.TextInput(attrs={"type": "color"}),
                                  error_messages={"invalid": "Use a colour like #1f6feb."})

    icon_file = forms.FileField(required=False, label="Upload an icon",
                                help_text=f"PNG, JPEG, GIF or WebP, at most {MAX_ICON_BYTES // 1024} KB; "
                                "replaces the icon URL.")
    remove_icon = forms.BooleanField(required=False, label="Remove the uploaded icon")

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance.icon:
            del self.fields["remove_icon"]  # nothing uploaded to remove

    def clean_icon_url(self) -> str:
        url = self.cleaned_data["icon_url"].strip()
        if url and not url.startswith("https://"):
            # Pages served over https would block an http icon as mixed content.
            raise forms.ValidationError("Use an https:// address for the icon.")
        return url

    def clean_icon_file(self) -> object:
        upload = self.cleaned_data.get("icon_file")
        if upload is None:
            return None
        if upload.size > MAX_ICON_BYTES:
            raise forms.ValidationError(f"The icon must be at most {MAX_ICON_BYTES // 1024} KB.")
        head = upload.read(16)
        upload.seek(0)
        if icon_format(head) is None:
            raise forms.ValidationError("The icon must be a PNG, JPEG, GIF or WebP image (SVG is not accepted).")
        return upload

    def model_changes(self) -> dict[str, object]:
        """The changed guru fields, without the icon upload controls (those go through guru_icon_set)."""
        return {name: self.cleaned_data[name] for name in self.changed_data if name in self.Meta.fields}
