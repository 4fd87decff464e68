"""App configuration for answering."""

from django.apps import AppConfig


class AnsweringConfig(AppConfig):
    name = "backend.answering"
    label = "answering"
    verbose_name = "Answering"
