"""App configuration for sources."""

from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "backend.sources"
    label = "sources"
    verbose_name = "Data sources"
