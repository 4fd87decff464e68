"""Instance-wide actions of the settings page."""

from __future__ import annotations

from backend.gurus.models import Guru
from backend.sources.services import source_reindex_guru


def sources_reindex_all() -> tuple[int, int]:
    """Schedule every source of every guru for re-indexing (new split sizes apply); returns (sources, gurus)."""
    sources = gurus = 0
    for guru in Guru.objects.filter(sources__isnull=False).distinct().order_by("pk"):
        sources += source_reindex_guru(guru=guru)
        gurus += 1
    return sources, gurus
