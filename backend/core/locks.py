"""Cross-process locks on the Django cache (atomic add on Redis and the database cache)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache


class LockNotAcquired(Exception):
    """Another worker holds the lock."""


def _release(key: str, token: str) -> None:
    # Only release our own lock: after a TTL expiry another holder may own the key.
    if cache.get(key) == token:
        cache.delete(key)


@contextmanager
def cache_lock(name: str, *, ttl: int = 600, wait: float = 0.0, poll: float = 0.1) -> Iterator[None]:
    """Hold `name` for the block; raise LockNotAcquired after `wait` seconds.

    The TTL frees the lock if its holder dies, so it must exceed the work's duration.
    """
    key, token = f"lock:{name}", uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while not cache.add(key, token, timeout=ttl):
        if time.monotonic() >= deadline:
            raise LockNotAcquired(name)
        time.sleep(poll)
    try:
        yield
    finally:
        _release(key, token)


@contextmanager
def cache_semaphore(name: str, *, slots: int, ttl: int = 600) -> Iterator[None]:
    """Hold one of `slots` locks named `name:<i>`; raise LockNotAcquired when all are taken."""
    token = uuid.uuid4().hex
    key = next((k for k in (f"lock:{name}:{i}" for i in range(max(1, slots))) if cache.add(k, token, timeout=ttl)),
               None)
    if key is None:
        raise LockNotAcquired(name)
    try:
        yield
    finally:
        _release(key, token)
