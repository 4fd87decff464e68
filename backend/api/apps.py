"""App configuration for api."""

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "backend.api"
    label = "api"
    verbose_name = "API"
    # The X-API-KEY security scheme (backend/api/schema.py) registers when the API's views are imported, which
    # generating the schema always does; importing it here cost every process 0.2 s of drf-spectacular at start.
