"""Admin for evaluation: sets and their items are editable; runs are measurements, shown read-only."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from backend.evaluation.models import EvalItem, EvalRun, EvalSet


class EvalItemInline(admin.TabularInline):
    model = EvalItem
    extra = 0
    fields = ["position", "question", "refusal_kind", "category"]
    show_change_link = True


@admin.register(EvalSet)
class EvalSetAdmin(admin.ModelAdmin):
    list_display = ["name", "guru", "updated_at"]
    list_filter = ["guru"]
    inlines = [EvalItemInline]


@admin.register(EvalItem)
class EvalItemAdmin(admin.ModelAdmin):
    list_display = ["__str__", "eval_set", "refusal_kind", "category"]
    list_filter = ["refusal_kind", "eval_set__guru"]
    search_fields = ["question"]
    raw_id_fields = ["from_question"]


@admin.register(EvalRun)
class EvalRunAdmin(admin.ModelAdmin):
    """A run records what the pipeline did: it is never edited by hand."""

    list_display = ["__str__", "guru", "state", "done", "total", "trust_threshold", "started_at"]
    list_filter = ["state", "guru"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: EvalRun | None = None) -> bool:
        return False
