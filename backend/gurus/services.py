"""Guru write paths: keeping each guru's vector collection in step with the guru row."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction

from backend.adapters import registry
from backend.gurus.models import CollectionStatus, Guru
from backend.pipeline.errors import PermanentServiceError

logger = logging.getLogger(__name__)

COLLECTION_LOCK_TTL = 600


def collection_name_for(slug: str) -> str:
    """The vector collection a guru with this slug should have (slugs never contain '_')."""
    return f"{settings.OPENGURU_COLLECTION_PREFIX}{slug.replace('-', '_')}"


def collection_lock_name(guru_id: int) -> str:
    """Lock serialising create/rename/drop of one guru's collection."""
    return f"guru-collection:{guru_id}"


def guru_collection_schedule_sync(*, guru: Guru) -> None:
    """After commit, converge the guru's collection if it is not known to be in step."""
    in_step = (
        guru.collection_status == CollectionStatus.READY
        and guru.vector_collection == collection_name_for(guru.slug)
    )
    if in_step:
        return
    from backend.gurus.tasks import guru_collection_sync as guru_collection_sync_task

    guru_id = guru.pk
    transaction.on_commit(lambda: guru_collection_sync_task.delay(guru_id=guru_id))


def guru_collection_schedule_drop(*, guru: Guru) -> None:
    """After the guru's deletion commits, drop its collection (under either name) and files."""
    from backend.gurus.tasks import guru_collection_drop as guru_collection_drop_task

    names = sorted({n for n in (guru.vector_collection, collection_name_for(guru.slug)) if n})
    guru_id = guru.pk
    transaction.on_commit(lambda: guru_collection_drop_task.delay(guru_id=guru_id, collection_names=names))


def guru_collection_sync(*, guru_id: int) -> None:
    """Create or rename the guru's collection to match its slug, and check its dimension.

    Idempotent; the caller holds the guru's collection lock. A deleted guru is a no-op.
    Raises PermanentServiceError (after recording it on the guru) or TransientServiceError.
    """
    guru = Guru.objects.filter(pk=guru_id).first()
    if guru is None:
        return
    desired = collection_name_for(guru.slug)
    store = registry.vector_store()
    try:
        if guru.vector_collection and guru.vector_collection != desired:
            store.rename_collection(guru.vector_collection, desired)
        store.ensure_collection(desired, dimension=registry.embedder().dimension)
    except PermanentServiceError as exc:
        Guru.objects.filter(pk=guru_id).update(collection_status=CollectionStatus.ERROR, collection_error=str(exc))
        logger.error("guru %s collection sync failed: %s", guru_id, exc)
        raise
    # update() sends no post_save signal, so this cannot schedule another sync.
    Guru.objects.filter(pk=guru_id).update(
        vector_collection=desired, collection_status=CollectionStatus.READY, collection_error=""
    )


def guru_collection_drop(*, guru_id: int, collection_names: list[str]) -> None:
    """Drop a deleted guru's collections and uploaded files. Idempotent."""
    store = registry.vector_store()
    for name in collection_names:
        store.drop_collection(name)
    folder = Path(settings.MEDIA_ROOT) / "sources" / str(int(guru_id))
    if folder.exists():
        shutil.rmtree(folder)
