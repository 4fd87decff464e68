"""Admin for widget ids."""

from django.contrib import admin

from backend.widget.models import WidgetId


@admin.register(WidgetId)
class WidgetIdAdmin(admin.ModelAdmin):
    list_display = ["__str__", "guru", "name", "active", "created_at"]
    list_filter = ["active", "guru"]
    readonly_fields = ["key"]
