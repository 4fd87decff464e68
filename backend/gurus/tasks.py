"""Celery entry points for guru collection lifecycle; thin wrappers over gurus.services."""

from __future__ import annotations

from typing import Any

from backend.core.locks import LockNotAcquired, cache_lock
from backend.core.tasks import LOCK_RETRY_COUNTDOWN, openguru_task


@openguru_task("gurus.collection_sync", max_retries=None)
def guru_collection_sync(self: Any, *, guru_id: int) -> None:
    from backend.gurus import services

    try:
        with cache_lock(services.collection_lock_name(guru_id), ttl=services.COLLECTION_LOCK_TTL):
            services.guru_collection_sync(guru_id=guru_id)
    except LockNotAcquired as exc:
        # Another worker is changing this collection: come back later, never drop the work.
        raise self.retry(exc=exc, countdown=LOCK_RETRY_COUNTDOWN) from exc


@openguru_task("gurus.collection_drop", max_retries=None)
def guru_collection_drop(self: Any, *, guru_id: int, collection_names: list[str]) -> None:
    from backend.gurus import services

    try:
        with cache_lock(services.collection_lock_name(guru_id), ttl=services.COLLECTION_LOCK_TTL):
            services.guru_collection_drop(guru_id=guru_id, collection_names=collection_names)
    except LockNotAcquired as exc:
        raise self.retry(exc=exc, countdown=LOCK_RETRY_COUNTDOWN) from exc
