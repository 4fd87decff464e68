"""App configuration for api."""

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "backend.api"
    label = "api"
    verbose_name = "API"
