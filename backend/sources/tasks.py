"""Celery entry points for ingestion; thin wrappers over sources.indexing and sources.services."""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings

from backend.core.locks import LockNotAcquired, cache_lock, cache_semaphore, kept_alive
from backend.core.tasks import openguru_task
from backend.pipeline.errors import TransientServiceError

LOCK_BUSY_COUNTDOWN = 10


@openguru_task("sources.index", max_retries=None, retry_backoff_max=600)
def source_index(self: Any, *, source_id: int, run: int) -> None:
    from backend.sources.indexing import source_index as index
    from backend.sources.models import DataSource
    from backend.sources.recovery import RUN_LEASE_TTL_S, run_heartbeat, source_lock_name
    from backend.sources.services import source_mark_crashed

    source = DataSource.objects.filter(pk=source_id).values("guru_id", "kind").first()
    if source is None:
        return
    name = f"ingest:{source['guru_id']}:{source['kind']}"
    try:
        # One run per source at a time (a newer run waits for the older to stop touching its files),
        # and a bounded number per guru and kind. Both are short leases the heartbeat renews, so a
        # killed worker frees them within RUN_LEASE_TTL_S.
        with (
            cache_lock(source_lock_name(source_id), ttl=RUN_LEASE_TTL_S) as own,
            cache_semaphore(name, slots=settings.OPENGURU_INGEST_CONCURRENCY, ttl=RUN_LEASE_TTL_S) as slot,
            run_heartbeat(source_id, run, (own, slot)),
        ):
            index(source_id=source_id, run=run)
    except LockNotAcquired as exc:
        # The guru already indexes as many sources of this kind as allowed: wait, never drop.
        raise self.retry(exc=exc, countdown=LOCK_BUSY_COUNTDOWN) from exc
    except TransientServiceError:
        raise  # retried with backoff by the task decorator
    except Exception as exc:
        # A bug or a time limit: say so on the source instead of leaving it PROCESSING, then let
        # Celery log the traceback.
        source_mark_crashed(source_id=source_id, run=run, exc=exc)
        raise


@openguru_task("sources.recover_stalled")
def sources_recover_stalled(self: Any, *, at_start: bool = False) -> int:
    from backend.sources.recovery import source_recover_stalled

    return source_recover_stalled(at_start=at_start)


@openguru_task("sources.summaries_recover")
def sources_summaries_recover(self: Any) -> int:
    from backend.sources.summaries import summaries_recover

    return summaries_recover()


@worker_ready.connect
def _recover_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    """Sources left PENDING/PROCESSING by the previous worker are re-queued when a worker starts, and so are
    the summary trees it left half-built, and the term counts and source graphs it left stale or never made."""
    sources_recover_stalled.delay(at_start=True)
    sources_summaries_recover.delay()
    sources_term_stats_recover.delay()
    sources_graph_recover.delay()


@openguru_task("sources.cleanup")
def source_cleanup(self: Any, *, source_id: int, guru_id: int, file_name: str) -> None:
    from backend.sources.services import source_cleanup as cleanup

    cleanup(source_id=source_id, guru_id=guru_id, file_name=file_name)


@openguru_task("sources.check_for_due")
def sources_check_for_due(self: Any) -> int:
    from backend.sources.services import source_schedule_due

    return source_schedule_due()


SUMMARY_LOCK_TTL = 30


@openguru_task("sources.summarize", max_retries=None, retry_backoff_max=600)
def source_summarize(self: Any, *, guru_id: int, source_id: int | None = None) -> None:
    from backend.sources.summaries import summaries_run, summary_mark_failed

    try:
        # One tree at a time per guru: the guru's summary reads every source's, and the budget is shared.
        # A short lease kept alive while the tree is built: a killed worker's lock is free within 30 s.
        with (cache_lock(f"summaries:{guru_id}", ttl=SUMMARY_LOCK_TTL) as held,
              kept_alive(held, ttl=SUMMARY_LOCK_TTL, every=SUMMARY_LOCK_TTL / 3)):
            summaries_run(guru_id=guru_id, source_id=source_id)
    except LockNotAcquired as exc:
        raise self.retry(exc=exc, countdown=LOCK_BUSY_COUNTDOWN) from exc
    except SoftTimeLimitExceeded as exc:
        # A very large source: the nodes made so far are stored, so the next attempt goes on from them.
        raise self.retry(exc=exc, countdown=1) from exc
    except TransientServiceError:
        raise
    except Exception as exc:
        summary_mark_failed(source_id=source_id, exc=exc)
        raise


@openguru_task("sources.term_stats")
def source_term_stats(self: Any, *, source_id: int) -> None:
    from backend.sources.term_stats import term_stats_refresh

    term_stats_refresh(source_id=source_id)


@openguru_task("sources.term_stats_recover")
def sources_term_stats_recover(self: Any) -> int:
    from backend.sources.term_stats import term_stats_recover

    return term_stats_recover()


@openguru_task("sources.graph")
def guru_graph(self: Any, *, guru_id: int) -> None:
    from backend.sources.graph import graph_refresh

    graph_refresh(guru_id=guru_id)


@openguru_task("sources.graph_recover")
def sources_graph_recover(self: Any) -> int:
    from backend.sources.graph import graph_recover

    return graph_recover()
