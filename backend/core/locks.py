"""Cross-process locks on the counter store: one atomic claim on the database or Redis."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from backend.core.counters import CounterStore, counter_store


class LockNotAcquired(Exception):
    """Another worker holds the lock."""


@dataclass(frozen=True)
class Held:
    """A held lock; long work renews it so a short TTL can free it soon after its holder dies."""

    store: CounterStore
    key: str
    token: str

    def renew(self, ttl: int) -> bool:
        """Hold the lock `ttl` s from now; False if it expired and someone else took it."""
        return self.store.renew(self.key, self.token, ttl=ttl)


@contextmanager
def cache_lock(name: str, *, ttl: int = 600, wait: float = 0.0, poll: float = 0.1) -> Iterator[Held]:
    """Hold `name` for the block; raise LockNotAcquired after `wait` seconds.

    The TTL frees the lock if its holder dies, so it must exceed the work's duration.
    """
    store, key, token = counter_store(), f"lock:{name}", uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while not store.claim(key, token, ttl=ttl):
        if time.monotonic() >= deadline:
            raise LockNotAcquired(name)
        time.sleep(poll)
    try:
        yield Held(store, key, token)
    finally:
        store.release(key, token)


@contextmanager
def cache_semaphore(name: str, *, slots: int, ttl: int = 600) -> Iterator[Held]:
    """Hold one of `slots` locks named `name:<i>`; raise LockNotAcquired when all are taken."""
    store, token = counter_store(), uuid.uuid4().hex
    keys = (f"lock:{name}:{i}" for i in range(max(1, slots)))
    key = next((k for k in keys if store.claim(k, token, ttl=ttl)), None)
    if key is None:
        raise LockNotAcquired(name)
    try:
        yield Held(store, key, token)
    finally:
        store.release(key, token)
