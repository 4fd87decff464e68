"""Admin for questions and conversation sessions."""

from django.contrib import admin

from backend.answering.models import Binge, Question


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["question", "guru", "channel", "trust_score", "out_of_context", "created_at"]
    list_filter = ["channel", "out_of_context", "guru"]
    search_fields = ["question", "user_question"]
    list_select_related = ["guru"]


@admin.register(Binge)
class BingeAdmin(admin.ModelAdmin):
    list_display = ["id", "guru", "channel", "owner", "last_used_at"]
    list_filter = ["channel", "guru"]
