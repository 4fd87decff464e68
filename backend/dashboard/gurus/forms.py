"""Forms for creating and editing a guru."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django import forms
from django.forms import BoundField

from backend.gurus.icons import MAX_ICON_BYTES, icon_format
from backend.gurus.models import SLUG_PATTERN, Guru, slug_validator
from backend.gurus.selectors import guru_slug_from_name

COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"


class GuruForm(forms.ModelForm):
    """The maintainer-editable fields of a guru; the model's validators apply (slug format, lengths)."""

    slug = forms.RegexField(regex=SLUG_PATTERN, max_length=50, required=False,
                            help_text="Lowercase letters, digits and hyphens; the guru page lives at /g/<slug>/.",
                            error_messages={"invalid": slug_validator.message})
    # A declared field does not take the model's default as its initial value: without it the colour
    # input of a new guru would show black.
    base_color = forms.RegexField(regex=COLOR_PATTERN, widget=forms.TextInput(attrs={"type": "color"}),
                                  initial=Guru._meta.get_field("base_color").default, label="Colour",
                                  error_messages={"invalid": "Use a colour like #1f6feb."})

    # The icon group (dashboard/gurus/_icon_group.html): an upload or a URL; an upload wins over the URL.
    icon_file = forms.FileField(required=False, label="Upload an image",
                                widget=forms.FileInput(attrs={"accept": "image/png,image/jpeg,image/gif,image/webp"}))
    remove_icon = forms.BooleanField(required=False, label="Remove the uploaded icon")
    ICON_GROUP = ("icon_file", "icon_url", "remove_icon")
    field_order = ["name", "slug", "domain_knowledge", "intro_text", "base_color", *ICON_GROUP]

    class Meta:
        model = Guru
        fields = ["name", "slug", "domain_knowledge", "intro_text", "base_color", "icon_url", "language",
                  "private", "active"]
        labels = {"intro_text": "Intro", "icon_url": "Image URL", "domain_knowledge": "Domain knowledge"}
        help_texts = {
            "intro_text": "Shown above the question box on the guru page and in the widget.",
            "icon_url": "Or the https address of an image.",
            "active": "Inactive gurus refuse questions on every channel.",
        }
        widgets = {"domain_knowledge": forms.Textarea(attrs={"rows": 2}),
                   "intro_text": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance.icon:
            del self.fields["remove_icon"]  # nothing uploaded to remove
        if self.instance.pk:
            self.fields["slug"].required = True  # renaming moves the guru's page: never by accident
        else:
            self.fields["slug"].help_text += " Left blank, it is made from the name."
            self.fields["slug"].widget.attrs["data-from-name"] = "id_name"  # guru-form.js fills it while typing

    def __iter__(self) -> Iterator[BoundField]:
        """The fields _fields.html lays out one by one; the icon group stands in for its three fields."""
        for name in self.fields:
            if name not in self.ICON_GROUP[1:]:
                yield self[name]

    def icon_group(self) -> list[BoundField]:
        return [self[name] for name in self.ICON_GROUP if name in self.fields]

    def clean_slug(self) -> str:
        return str(self.cleaned_data.get("slug") or "").strip()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("slug") and cleaned.get("name") and not self.instance.pk:
            cleaned["slug"] = guru_slug_from_name(cleaned["name"])
        return cleaned

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
