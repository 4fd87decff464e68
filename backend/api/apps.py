"""App configuration for api; registers the OpenAPI extensions."""

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "backend.api"
    label = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from backend.api import schema  # noqa: F401  (registers the ApiKeyAuth security scheme)
