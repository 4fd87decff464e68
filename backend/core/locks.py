"""Cross-process locks on the Django cache (atomic add on Redis and the database cache)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache


class LockNotAcquired(Exception):
    """Another worker holds the lock."""


@contextmanager
def cache_lock(name: str, *, ttl: int = 600, wait: float = 0.0, poll: float = 0.1) -> Iterator[None]:
    """Hold `name` for the block; raise LockNotAcquired after `wait` seconds.

    The TTL frees the lock if its holder dies, so it must exceed the work's duration.
    """
    key = f"lock:{name}"
    token = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while not cache.add(key, token, timeout=ttl):
        if time.monotonic() >= deadline:
            raise LockNotAcquired(name)
        time.sleep(poll)
    try:
        yield
    finally:
        # Only release our own lock: after a TTL expiry another holder may own the key.
        if cache.get(key) == token:
            cache.delete(key)
