"""App configuration for core."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "backend.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # Every process that sets Django up (web, Celery worker, beat, eager tests) counts its tasks.
        from backend.core import metrics

        metrics.connect_signals()
