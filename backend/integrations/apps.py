"""App configuration for integrations."""

from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "backend.integrations"
    label = "integrations"
    verbose_name = "Integrations"
