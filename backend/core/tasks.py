"""The one decorator every Celery task uses: explicit name, acks_late, retries on transient errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import current_app, shared_task
from django.db import transaction

from backend.pipeline.errors import TransientServiceError

LOCK_RETRY_COUNTDOWN = 5


def openguru_task(name: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Register a task under an explicit, stable name with our reliability defaults."""
    defaults: dict[str, Any] = {
        "name": name,
        "bind": True,
        "acks_late": True,
        "autoretry_for": (TransientServiceError,),
        "retry_backoff": 2,
        "retry_backoff_max": 300,
        "retry_jitter": True,
        "max_retries": 8,
    }
    defaults.update(options)
    return shared_task(**defaults)


def enqueue_on_commit(name: str, **kwargs: Any) -> None:
    """After the caller's transaction commits, queue the task registered under `name` with these arguments.

    By name, so a service never imports its app's tasks module, which imports the service (a cycle;
    .importlinter forbids it). Each app's ready() imports its tasks, so every process knows the name.
    """
    transaction.on_commit(lambda: current_app.tasks[name].delay(**kwargs))
