"""Fixed-window rate limits on the counter store (one atomic increment on the database or Redis)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.http import HttpRequest

from backend.core.counters import counter_store


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int


def hit(key: str, *, limit: int, window: int = 60) -> RateDecision:
    """Count one request against `limit` per `window` seconds for `key`."""
    if limit <= 0:
        return RateDecision(True, 0)
    now = time.time()
    # The increment returns the count including this request, so concurrent requests see distinct values.
    count = counter_store().increment(f"rl:{key}:{int(now // window)}", ttl=window + 1)
    if count <= limit:
        return RateDecision(True, 0)
    return RateDecision(False, max(1, window - int(now % window)))


def client_ip(request: HttpRequest) -> str:
    """The client's address: the TCP peer, or what a trusted proxy forwarded (see backend/config/asgi.py).

    Client-sent headers (X-Real-IP, X-Forwarded-For) are never read here: anyone can send them.
    """
    return str(request.META.get("REMOTE_ADDR") or "unknown")
