"""Admin for the global Settings singleton."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from backend.core.models import Settings


@admin.register(Settings)
class SettingsAdmin(admin.ModelAdmin):
    list_display = ["__str__", "rerank_threshold", "trust_score_threshold", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not Settings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Settings | None = None) -> bool:
        return False
