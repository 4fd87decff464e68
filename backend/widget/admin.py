"""Admin for widget ids: validated allowed origins and the embed snippet to copy."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from backend.widget.models import WidgetId
from backend.widget.origins import canonical_patterns
from backend.widget.services import embed_snippet


def clean_origins(value: Any) -> list[str]:
    """The canonical, de-duplicated patterns, or a ValidationError listing every bad one."""
    if not isinstance(value, list):
        raise forms.ValidationError('Enter a JSON list of origins, e.g. ["https://docs.example.com"].')
    cleaned, problems = canonical_patterns(value)
    if problems:
        raise forms.ValidationError([reason for _, reason in problems])
    return cleaned


class WidgetIdForm(forms.ModelForm):
    class Meta:
        model = WidgetId
        fields = ["guru", "name", "allowed_origins", "rate_limit_per_minute", "per_ip_rate_limit_per_minute",
                  "active"]

    def clean_allowed_origins(self) -> list[str]:
        return clean_origins(self.cleaned_data.get("allowed_origins"))


@admin.register(WidgetId)
class WidgetIdAdmin(admin.ModelAdmin):
    form = WidgetIdForm
    list_display = ["__str__", "guru", "name", "active", "created_at"]
    list_filter = ["active", "guru"]
    readonly_fields = ["key", "embed_snippet"]

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> WidgetId | None:
        widget: WidgetId | None = super().get_object(request, object_id, from_field)
        if widget is not None:
            # Read-only field callables get no request; the snippet needs this server's public address.
            widget.embed_base = request.build_absolute_uri("/").rstrip("/")  # type: ignore[attr-defined]
        return widget

    @admin.display(description="Embed snippet")
    def embed_snippet(self, widget: WidgetId) -> str:
        if widget.pk is None:
            return "Save the widget id to get its snippet."
        base = getattr(widget, "embed_base", "")
        return format_html("<code>{}</code>", embed_snippet(script_url=f"{base}/widget.js", key=widget.key))
