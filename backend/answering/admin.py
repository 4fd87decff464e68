"""Admin for questions, their citations, conversation sessions and the gurus' memory notes."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from backend.answering.models import Binge, Citation, Memory, Question

_CITATION_FIELDS = ("source_id", "title")


class CitationInline(admin.TabularInline):
    model = Citation
    fields = _CITATION_FIELDS
    readonly_fields = _CITATION_FIELDS
    extra = 0
    can_delete = False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    inlines = [CitationInline]
    list_display = ["question", "guru", "channel", "trust_score", "out_of_context", "created_at"]
    list_filter = ["channel", "out_of_context", "guru"]
    search_fields = ["question", "user_question"]
    list_select_related = ["guru"]


@admin.register(Binge)
class BingeAdmin(admin.ModelAdmin):
    list_display = ["id", "guru", "channel", "owner", "last_used_at"]
    list_filter = ["channel", "guru"]


@admin.register(Citation)
class CitationAdmin(admin.ModelAdmin):
    """Read-only: citations are written with their answer."""

    list_display = ["question", "source_id", "title", "guru", "created_at"]
    list_filter = ["guru"]
    list_select_related = ["question", "guru"]
    raw_id_fields = ["question"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Citation | None = None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    """Maintainers manage notes on the dashboard's Memory tab (which keeps their vectors current): shown here."""

    list_display = ["text", "guru", "status", "origin", "updated_at"]
    list_filter = ["status", "origin"]
    search_fields = ["text"]
    list_select_related = ["guru"]
    readonly_fields = ["guru", "text", "status", "origin", "question", "author", "proposed_text", "embedding_model"]
    exclude = ["embedding"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
