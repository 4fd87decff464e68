"""Fixed-window rate limits on the shared cache (Redis in production, the database cache otherwise)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.cache import cache
from django.http import HttpRequest


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int


def hit(key: str, *, limit: int, window: int = 60) -> RateDecision:
    """Count one request against `limit` per `window` seconds for `key`."""
    if limit <= 0:
        return RateDecision(True, 0)
    bucket = int(time.time() // window)
    name = f"rl:{key}:{bucket}"
    # add() creates the counter atomically; incr() is atomic on Redis and the database cache alike.
    count = 1 if cache.add(name, 1, timeout=window + 1) else cache.incr(name)
    retry_after = window - int(time.time() % window)
    return RateDecision(count <= limit, 0 if count <= limit else max(1, retry_after))


def client_ip(request: HttpRequest) -> str:
    """The peer address (nginx sets X-Real-IP to it; uvicorn's proxy headers fill REMOTE_ADDR)."""
    return str(request.META.get("HTTP_X_REAL_IP") or request.META.get("REMOTE_ADDR") or "unknown")
