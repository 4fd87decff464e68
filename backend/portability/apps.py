"""App configuration for portability: export_data / import_data move a whole install's data."""

from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    # Above every domain app (it reads and replaces all of them), so not part of core (.importlinter).
    name = "backend.portability"
    label = "portability"
    verbose_name = "Export and import"
