"""App configuration for sources; registers its tasks and its part of the /metrics scrape."""

from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "backend.sources"
    label = "sources"
    verbose_name = "Data sources"

    def ready(self) -> None:
        # The tasks services queue by name (core.tasks.enqueue_on_commit) must be registered here too.
        from backend.core import metrics_collector
        from backend.sources import metrics, tasks  # noqa: F401

        # core serves /metrics but depends on no app: the source counts are handed to it.
        metrics_collector.register_part("sources", metrics.source_metric_families)
