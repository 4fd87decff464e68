"""Pytest plugin: a real Celery worker in a thread of the test process, fed through kombu's memory transport."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

WORKER_SHUTDOWN_TIMEOUT_S = 30.0


@pytest.fixture
def live_celery_worker() -> Iterator[None]:
    """Tasks stop running eagerly: `.delay()` publishes to an in-memory broker and a solo worker runs them.

    Use with @pytest.mark.django_db(transaction=True) so the worker thread sees committed rows. The
    request that schedules work returns at once, as in production, so progress can be watched.
    """
    from celery.contrib.testing.worker import start_worker

    from backend.config.celery_app import app

    keys = ("task_always_eager", "broker_url", "broker_transport_options")
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(task_always_eager=False, broker_url="memory://", broker_transport_options={})
    _reset_pools(app)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=WORKER_SHUTDOWN_TIMEOUT_S):
            yield
    finally:
        app.conf.update(saved)
        _reset_pools(app)


def _reset_pools(app: object) -> None:
    """Producers cache connections to the broker they first used; drop them so the new broker URL applies."""
    import kombu.pools

    kombu.pools.reset()  # closes and forgets kombu's process-wide producer and connection pools
    pool = getattr(app, "_pool", None)
    if pool is not None:
        pool.force_close_all()
    # Celery rebuilds both lazily from the current conf (as it does after a fork).
    app._pool = None  # type: ignore[attr-defined]
    amqp = app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None
