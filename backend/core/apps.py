"""App configuration for core."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "backend.core"
    label = "core"
    verbose_name = "Core"
