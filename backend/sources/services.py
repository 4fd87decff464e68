"""Data source write paths (ingestion itself arrives with issue #4)."""

from __future__ import annotations

from backend.sources.models import DataSource, SourceStatus


def source_mark_for_reindex(*, guru_id: int, reason: str) -> int:
    """Put every source of a guru back to PENDING with a note; returns how many were marked."""
    return DataSource.objects.filter(guru_id=guru_id).update(
        status=SourceStatus.PENDING, error_message=reason, progress_done=0, progress_total=0, chunk_count=0
    )
