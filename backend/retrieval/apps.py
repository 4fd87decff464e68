"""App configuration for retrieval."""

from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "backend.retrieval"
    label = "retrieval"
    verbose_name = "Retrieval"
