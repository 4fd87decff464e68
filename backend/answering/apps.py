"""App configuration for answering; registers its tasks."""

from django.apps import AppConfig


class AnsweringConfig(AppConfig):
    name = "backend.answering"
    label = "answering"
    verbose_name = "Answering"

    def ready(self) -> None:
        # The tasks services queue by name (core.tasks.enqueue_on_commit) must be known in every process.
        from backend.answering import tasks  # noqa: F401
