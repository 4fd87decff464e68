"""Admin for gurus, showing each guru's live vector-collection stats."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from backend.gurus.models import ExampleQuestion, Guru, VectorCollection
from backend.gurus.selectors import guru_collection_report, guru_list_for_user


@admin.register(Guru)
class GuruAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "active"]
    search_fields = ["name", "slug"]
    list_filter = ["active", "private"]
    filter_horizontal = ["maintainers"]
    readonly_fields = ["collection_stats"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Guru]:
        return guru_list_for_user(user=request.user)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # A maintainer who creates a guru must keep seeing it, whatever the form said.
        if not request.user.is_superuser:
            form.instance.maintainers.add(request.user)

    @admin.display(description="Collection in the vector store")
    def collection_stats(self, obj: Guru) -> str:
        if obj.pk is None:
            return "Created when the guru is saved."
        report = guru_collection_report(guru=obj)
        if report.info is None:
            return report.problem
        info = report.info
        loaded = "loaded" if info.loaded else "not loaded"
        text = f"{info.name}: {info.row_count} rows (chunks and summaries), {info.dimension}-d, {loaded}"
        return f"{text} — {report.problem}" if report.problem else text


@admin.register(VectorCollection)
class VectorCollectionAdmin(admin.ModelAdmin):
    """Read-only: the lifecycle services own these rows."""

    list_display = ["name", "guru_id", "dimension", "status", "updated_at"]
    list_filter = ["status"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: VectorCollection | None = None) -> bool:
        return False


@admin.register(ExampleQuestion)
class ExampleQuestionAdmin(admin.ModelAdmin):
    """Read-only: the Overview tab edits examples through the service that cleans and bounds them."""

    list_display = ["text", "guru", "position", "approved"]
    list_filter = ["approved"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ExampleQuestion]:
        return super().get_queryset(request).filter(guru__in=guru_list_for_user(user=request.user))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ExampleQuestion | None = None) -> bool:
        return False
