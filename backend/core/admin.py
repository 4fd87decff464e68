"""Admin for the global Settings singleton and, read-only, the database counter store."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from backend.core.models import Counter, Lease, Settings


@admin.register(Settings)
class SettingsAdmin(admin.ModelAdmin):
    list_display = ["__str__", "rerank_threshold", "trust_score_threshold", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not Settings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Settings | None = None) -> bool:
        return False


class CounterStoreAdmin(admin.ModelAdmin):
    """Rows are written only by the store's atomic upserts; operators may look, and delete one to free it."""

    list_display = ["key", "expires_at"]
    search_fields = ["key"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Counter)
class CounterAdmin(CounterStoreAdmin):
    list_display = ["key", "count", "expires_at"]


@admin.register(Lease)
class LeaseAdmin(CounterStoreAdmin):
    list_display = ["key", "token", "expires_at"]
