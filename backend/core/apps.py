"""App configuration for core."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "backend.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # Every process that sets Django up (web, Celery worker, beat, eager tests) counts its tasks.
        from backend.adapters import registry
        from backend.core import llm_config, metrics

        metrics.connect_signals()
        # The registry reads the chat provider staff saved through core (adapters import no models).
        registry.use_stored_llm(llm_config.stored_llm)
