"""Admin for data sources, GitHub files and summaries (operators; maintainers use the dashboard)."""

from django.contrib import admin

from backend.sources.models import DataSource, GithubFile, Summarization


@admin.register(DataSource)
class DataSourceAdmin(admin.ModelAdmin):
    list_display = ["__str__", "guru", "kind", "status", "progress_done", "progress_total", "last_indexed_at"]
    list_filter = ["kind", "status", "guru"]
    search_fields = ["title", "url"]
    readonly_fields = ["generation", "indexed_generation", "chunk_count", "content_hash", "last_indexed_at",
                       "reindex_count"]
    exclude = ["access_token"]


@admin.register(GithubFile)
class GithubFileAdmin(admin.ModelAdmin):
    list_display = ["path", "source", "size", "in_index"]
    search_fields = ["path"]
    list_select_related = ["source"]


@admin.register(Summarization)
class SummarizationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "guru", "source", "level", "is_root", "model"]
    list_filter = ["is_root", "guru"]
