"""App configuration for gurus; connects the collection-lifecycle signals and registers its tasks."""

from django.apps import AppConfig


class GurusConfig(AppConfig):
    name = "backend.gurus"
    label = "gurus"
    verbose_name = "Gurus"

    def ready(self) -> None:
        # Registers receivers, checks and the tasks services queue by name (core.tasks.enqueue_on_commit).
        from backend.gurus import checks, signals, tasks  # noqa: F401
