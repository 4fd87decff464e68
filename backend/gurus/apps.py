"""App configuration for gurus; connects the collection-lifecycle signals."""

from django.apps import AppConfig


class GurusConfig(AppConfig):
    name = "backend.gurus"
    label = "gurus"
    verbose_name = "Gurus"

    def ready(self) -> None:
        from backend.gurus import checks, signals  # noqa: F401  (registers receivers and checks)
