"""Core read paths: the health of the services the product depends on."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection

from backend.adapters import registry
from backend.core.models import Settings
from backend.pipeline.errors import ServiceError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Health:
    """Each dependency's state: "ok" or a short error."""

    database: str
    vector_store: str

    @property
    def ok(self) -> bool:
        return self.database == "ok" and self.vector_store == "ok"


def health_check() -> Health:
    """Ask the database a trivial question, and the vector store whether every collection is searchable."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except DatabaseError as exc:
        database = unreachable("database", exc)
    return Health(database=database, vector_store=_vector_store_health())


def _vector_store_health() -> str:
    """"ok" when the store answers and every collection of this install is loaded (searchable)."""
    try:
        unloaded = registry.vector_store().unloaded_collections(prefix=settings.OPENGURU_COLLECTION_PREFIX)
    except ServiceError as exc:
        return unreachable("vector store", exc)
    if unloaded:
        # A count, not names: this answers anonymous probes, and a private guru's slug is not public.
        return (f"error: {len(unloaded)} collection(s) not loaded; searches load them, "
                "`manage.py collections` names them")
    return "ok"


def unreachable(what: str, exc: Exception) -> str:
    """A short status for anonymous probes; the exception (hosts, paths, users) goes to the log only."""
    logger.warning("health: the %s is unreachable: %s", what, exc)
    return f"error: unreachable ({type(exc).__name__}; details in the log)"


def settings_get() -> Settings:
    """The global settings row, created with defaults on first use."""
    instance, _ = Settings.objects.get_or_create(id=Settings.SINGLETON_ID)
    return instance
