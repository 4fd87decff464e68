"""Core read paths: the health of the services the product depends on."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import DatabaseError, connection

from backend.adapters import registry
from backend.core.models import Settings
from backend.pipeline.errors import ServiceError


@dataclass(frozen=True)
class Health:
    """Each dependency's state: "ok" or a short error."""

    database: str
    vector_store: str

    @property
    def ok(self) -> bool:
        return self.database == "ok" and self.vector_store == "ok"


def health_check() -> Health:
    """Ask the database and the vector store a trivial question each."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except DatabaseError as exc:
        database = f"error: {exc}"
    try:
        registry.vector_store().list_collections()
        vector_store = "ok"
    except ServiceError as exc:
        vector_store = f"error: {exc}"
    return Health(database=database, vector_store=vector_store)


def settings_get() -> Settings:
    """The global settings row, created with defaults on first use."""
    instance, _ = Settings.objects.get_or_create(id=Settings.SINGLETON_ID)
    return instance
