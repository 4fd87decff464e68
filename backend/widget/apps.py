"""App configuration for widget."""

from django.apps import AppConfig


class WidgetConfig(AppConfig):
    name = "backend.widget"
    label = "widget"
    verbose_name = "Widget"
