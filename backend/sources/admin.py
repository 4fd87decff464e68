"""Admin for data sources, GitHub files, website pages, summaries, term counts and the source graph (operators;
maintainers use the dashboard)."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from backend.sources.models import (
    DataSource,
    DocumentEdge,
    DocumentNode,
    GithubFile,
    SourceGraphState,
    SourcePage,
    SourceTerm,
    SourceTermStats,
    Summarization,
)
from backend.sources.services import source_delete, source_schedule_index


@admin.register(DataSource)
class DataSourceAdmin(admin.ModelAdmin):
    """Adding indexes after commit, deleting cleans vectors and files, an action re-indexes."""

    list_display = ["__str__", "guru", "kind", "status", "progress_done", "progress_total", "last_indexed_at"]
    list_filter = ["kind", "status", "guru"]
    search_fields = ["title", "url"]
    readonly_fields = ["generation", "indexed_generation", "chunk_count", "content_hash", "last_indexed_at",
                       "reindex_count", "summary_state", "summary_done", "summary_total", "summary_note"]
    exclude = ["access_token"]
    actions = ["reindex"]

    def save_model(self, request: HttpRequest, obj: DataSource, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            source_schedule_index(source=obj)

    def delete_model(self, request: HttpRequest, obj: DataSource) -> None:
        source_delete(source=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[DataSource]) -> None:
        for source in queryset:
            source_delete(source=source)

    @admin.action(description="Re-index selected sources")
    def reindex(self, request: HttpRequest, queryset: QuerySet[DataSource]) -> None:
        for source in queryset:
            source_schedule_index(source=source)
        self.message_user(request, f"{queryset.count()} source(s) queued for re-indexing.")


@admin.register(GithubFile)
class GithubFileAdmin(admin.ModelAdmin):
    list_display = ["path", "source", "size", "in_index"]
    search_fields = ["path"]
    list_select_related = ["source"]


@admin.register(SourcePage)
class SourcePageAdmin(admin.ModelAdmin):
    """Written by index runs; shown for operators, never edited by hand."""

    list_display = ["url", "source", "status", "chunk_count", "last_indexed_at"]
    list_filter = ["status"]
    search_fields = ["url", "title"]
    list_select_related = ["source"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SourcePage | None = None) -> bool:
        return False


@admin.register(Summarization)
class SummarizationAdmin(admin.ModelAdmin):
    """Built by the summary task (nodes are re-used by content hash): shown for operators, never edited by hand."""

    list_display = ["__str__", "guru", "source", "level", "is_root", "is_source_root", "model"]
    list_filter = ["is_root", "guru"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Summarization | None = None) -> bool:
        return False


class _CountedAdmin(admin.ModelAdmin):
    """Term counts are written by the worker after each index run (sources.term_stats): shown, never edited."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False


@admin.register(SourceTerm)
class SourceTermAdmin(_CountedAdmin):
    list_display = ["term", "source", "df"]
    search_fields = ["term"]
    list_select_related = ["source"]


@admin.register(SourceTermStats)
class SourceTermStatsAdmin(_CountedAdmin):
    list_display = ["source", "chunks", "generation", "updated_at"]
    list_select_related = ["source"]


@admin.register(DocumentNode)
class DocumentNodeAdmin(_CountedAdmin):
    """The source graph is rebuilt by the worker after each index run (sources.graph): shown, never edited."""

    list_display = ["key", "source", "title"]
    search_fields = ["key", "title"]
    list_select_related = ["source"]


@admin.register(DocumentEdge)
class DocumentEdgeAdmin(_CountedAdmin):
    list_display = ["origin", "kind", "target", "score"]
    list_filter = ["kind"]
    list_select_related = ["origin", "target"]


@admin.register(SourceGraphState)
class SourceGraphStateAdmin(_CountedAdmin):
    list_display = ["guru", "documents", "edges", "updated_at"]
    list_select_related = ["guru"]
