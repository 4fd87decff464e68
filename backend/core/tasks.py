"""The one decorator every Celery task uses: explicit name, acks_late, retries on transient errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import shared_task

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
