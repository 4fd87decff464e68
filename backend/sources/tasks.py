"""Celery entry points for ingestion; thin wrappers over sources.indexing and sources.services."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from backend.core.locks import LockNotAcquired, cache_lock, cache_semaphore
from backend.core.tasks import openguru_task

LOCK_BUSY_COUNTDOWN = 10
# Longer than the task's hard time limit, so a live run never loses its slot to the TTL.
INDEX_LOCK_TTL = 35 * 60


@openguru_task("sources.index", max_retries=None, retry_backoff_max=600)
def source_index(self: Any, *, source_id: int, run: int) -> None:
    from backend.sources.indexing import source_index as index
    from backend.sources.models import DataSource

    source = DataSource.objects.filter(pk=source_id).values("guru_id", "kind").first()
    if source is None:
        return
    name = f"ingest:{source['guru_id']}:{source['kind']}"
    try:
        # One run per source at a time (a newer run waits for the older to stop touching its files),
        # and a bounded number per guru and kind.
        with (
            cache_lock(f"source:{source_id}", ttl=INDEX_LOCK_TTL),
            cache_semaphore(name, slots=settings.OPENGURU_INGEST_CONCURRENCY, ttl=INDEX_LOCK_TTL),
        ):
            index(source_id=source_id, run=run)
    except LockNotAcquired as exc:
        # The guru already indexes as many sources of this kind as allowed: wait, never drop.
        raise self.retry(exc=exc, countdown=LOCK_BUSY_COUNTDOWN) from exc


@openguru_task("sources.cleanup")
def source_cleanup(self: Any, *, source_id: int, guru_id: int, file_name: str) -> None:
    from backend.sources.services import source_cleanup as cleanup

    cleanup(source_id=source_id, guru_id=guru_id, file_name=file_name)


@openguru_task("sources.check_for_due")
def sources_check_for_due(self: Any) -> int:
    from backend.sources.services import source_schedule_due

    return source_schedule_due()
