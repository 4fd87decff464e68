"""Cross-process locks on the counter store: one atomic claim on the database or Redis."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections

from backend.core.counters import CounterStore, counter_store

logger = logging.getLogger(__name__)


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


@contextmanager
def kept_alive(held: Held, *, ttl: int, every: float) -> Iterator[None]:
    """Renew `held` for `ttl` s every `every` s from a background thread while the block runs, so a short TTL
    frees the lock soon after its holder dies however long one step of the work takes."""
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(every):
                try:
                    if not held.renew(ttl):
                        logger.warning("lost the lock %s", held.key)
                except Exception:  # a busy store must not end the work; the next renewal tries again
                    logger.warning("renewing the lock %s failed", held.key, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections (the counter store may be the database)

    thread = threading.Thread(target=renew, name=f"renew-{held.key}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 5)
