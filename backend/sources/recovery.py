"""Nothing waits forever: index runs prove they are alive, and runs whose task died are re-queued.

A run is alive while its heartbeat (`DataSource.heartbeat_at`, stamped when queued and every few
seconds while it runs) is fresh *and* its per-source lock is held. The lock is a short lease the
heartbeat renews, so a SIGKILLed run frees it within a minute; recovery takes that lock itself
before touching a source, so it can never race a run that is still writing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta

from django.db.models import F, Q
from django.utils import timezone

from backend.adapters import registry
from backend.core.locks import Held, LockNotAcquired, beating, cache_lock
from backend.core.tasks import enqueue_on_commit
from backend.gurus.models import CollectionStatus, VectorCollection
from backend.sources.models import DataSource, SourceKind, SourceStatus

logger = logging.getLogger(__name__)

HEARTBEAT_EVERY_S = 10
# The per-source lock and ingest slot live this long without a renewal (a dead run frees them).
RUN_LEASE_TTL_S = 30
# A PROCESSING run silent this long has no live task.
RUN_STALE_AFTER = timedelta(seconds=45)
# A PENDING run not started this long after it was queued lost its message, or waits in a long
# queue; re-queueing it is harmless then (the first copy to run claims it, the other skips).
QUEUED_STALE_AFTER = timedelta(minutes=10)
MAX_RECOVERIES = 3
# Abandoned generations are looked for this far back from the current one (each run bumps it by 1).
ABANDONED_LOOKBACK = 50


def source_lock_name(source_id: int) -> str:
    return f"source:{source_id}"


def _beat(source_id: int, run: int) -> None:
    DataSource.objects.filter(pk=source_id, generation=run).update(heartbeat_at=timezone.now())


def _beat_and_renew(source_id: int, run: int, leases: Sequence[Held]) -> None:
    _beat(source_id, run)
    for lease in leases:
        if not lease.renew(RUN_LEASE_TTL_S):
            logger.warning("source %s run %s lost its lease %s", source_id, run, lease.key)


@contextmanager
def run_heartbeat(
    source_id: int, run: int, leases: Sequence[Held] = (), *, every: float = HEARTBEAT_EVERY_S
) -> Iterator[None]:
    """Stamp the run alive now and every `every` s in a background thread, renewing `leases` too."""
    _beat(source_id, run)
    with beating(lambda: _beat_and_renew(source_id, run, leases), every=every, name=f"heartbeat-source-{source_id}"):
        yield


def drop_abandoned_generations(*, source_id: int, collection: str, indexed: int | None, upto: int) -> None:
    """Delete the chunks of runs up to `upto` that never went live (crashed, superseded, half written).

    Only safe while holding the source's lock: no run of this source is writing then.
    """
    store = registry.vector_store()
    if indexed is None:  # nothing of this source answers yet
        store.delete_where(collection, source_id=source_id, generation_lt=upto + 1)
        return
    for generation in range(max(indexed + 1, upto - ABANDONED_LOOKBACK + 1), upto + 1):
        store.delete_where(collection, source_id=source_id, generation=generation)


def _ready_collection(guru_id: int) -> str | None:
    record = VectorCollection.objects.filter(guru_id=guru_id, status=CollectionStatus.READY).first()
    return record.name if record else None


def _stalled(at_start: bool) -> Q:
    now = timezone.now()
    silent = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=now - RUN_STALE_AFTER)
    queued_long_ago = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=now - QUEUED_STALE_AFTER)
    # At worker start every queued run is re-published: a message lost before this start (a
    # crash of the old broker, a publish that failed) would otherwise wait QUEUED_STALE_AFTER.
    pending = Q(status=SourceStatus.PENDING) if at_start else Q(status=SourceStatus.PENDING) & queued_long_ago
    return (Q(status=SourceStatus.PROCESSING) & silent) | pending


def source_recover_stalled(*, at_start: bool = False) -> int:
    """Re-queue PENDING/PROCESSING sources that have no live task; returns how many were re-queued."""
    recovered = 0
    for source in DataSource.objects.filter(_stalled(at_start)).order_by("pk"):
        try:
            with cache_lock(source_lock_name(source.pk), ttl=RUN_LEASE_TTL_S):
                recovered += _recover(source)
        except LockNotAcquired:
            continue  # a run of this source holds its lock: it is alive
    return recovered


def _recover(source: DataSource) -> int:
    run = source.generation
    collection = _ready_collection(source.guru_id)
    if collection is not None and source.kind != SourceKind.GITHUB_REPO:
        drop_abandoned_generations(source_id=source.pk, collection=collection,
                                   indexed=source.indexed_generation, upto=run)
    current = DataSource.objects.filter(pk=source.pk, generation=run, status=source.status,
                                        heartbeat_at=source.heartbeat_at)
    if source.recoveries >= MAX_RECOVERIES:
        current.update(status=SourceStatus.FAILED, error_message=(
            f"Indexing stopped {source.recoveries + 1} times without finishing (the worker was stopped or "
            "killed while it ran); the previous index keeps answering. Check the worker log, then re-index."))
        logger.error("source %s run %s died %s times; marked failed", source.pk, run, source.recoveries + 1)
        return 0
    if not current.update(status=SourceStatus.PENDING, heartbeat_at=timezone.now(), recoveries=F("recoveries") + 1):
        return 0  # it moved on meanwhile
    enqueue_on_commit("sources.index", source_id=source.pk, run=run)
    logger.warning("source %s run %s had no live task (was %s); re-queued", source.pk, run, source.status)
    return 1
