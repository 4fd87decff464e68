"""Cross-process locks on the counter store: one atomic claim on the database or Redis."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from django.db import connections

from backend.core.counters import CounterStore, counter_store
from backend.core.holders import holder_gone, holder_token

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


def _claim(store: CounterStore, key: str, token: str, ttl: int) -> bool:
    """Take the lease, or take it over from a holder process that died on this machine."""
    return store.claim(key, token, ttl=ttl) or _take_over_dead(store, key, token, ttl)


def _take_over_dead(store: CounterStore, key: str, token: str, ttl: int) -> bool:
    """Take the lease over if its holder process died on this machine (a SIGKILLed worker's lease would otherwise
    keep its run, or a summary tree, waiting for the TTL after the worker came back)."""
    old = store.holder(key)
    if old is None or not holder_gone(old) or not store.take_over(key, old, token, ttl=ttl):
        return False
    logger.info("took over %s: the process holding it is gone", key)
    return True


@contextmanager
def cache_lock(name: str, *, ttl: int = 600, wait: float = 0.0, poll: float = 0.1) -> Iterator[Held]:
    """Hold `name` for the block; raise LockNotAcquired after `wait` seconds.

    The TTL frees the lock if its holder dies, so it must exceed the work's duration; a holder that died on this
    machine frees it at once.
    """
    store, key, token = counter_store(), f"lock:{name}", holder_token()
    deadline = time.monotonic() + wait
    while not _claim(store, key, token, ttl):
        if time.monotonic() >= deadline:
            raise LockNotAcquired(name)
        time.sleep(poll)
    try:
        yield Held(store, key, token)
    finally:
        store.release(key, token)


@contextmanager
def cache_semaphore(name: str, *, slots: int, ttl: int = 600) -> Iterator[Held]:
    """Hold one of `slots` locks named `name:<i>`; raise LockNotAcquired when all are taken (by live holders)."""
    store, token = counter_store(), holder_token()
    keys = [f"lock:{name}:{i}" for i in range(max(1, slots))]
    # A free slot first; only when none is free, one whose holder died.
    key = next((k for k in keys if store.claim(k, token, ttl=ttl)), None) \
        or next((k for k in keys if _take_over_dead(store, k, token, ttl)), None)
    if key is None:
        raise LockNotAcquired(name)
    try:
        yield Held(store, key, token)
    finally:
        store.release(key, token)


@contextmanager
def beating(step: Callable[[], None], *, every: float, name: str) -> Iterator[None]:
    """Run `step` every `every` s from a background thread while the block runs (a heartbeat, a lease renewal).

    A failing step is logged and tried again at the next beat: a busy store must not end the work.
    """
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    step()
                except Exception:  # logged with its traceback; the work goes on
                    logger.warning("%s failed", name, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections (the counter store may be the database)

    thread = threading.Thread(target=beat, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 5)


def kept_alive(held: Held, *, ttl: int, every: float) -> AbstractContextManager[None]:
    """Renew `held` for `ttl` s every `every` s while the block runs, so a short TTL frees the lock soon after
    its holder dies however long one step of the work takes."""
    def renew() -> None:
        if not held.renew(ttl):
            logger.warning("lost the lock %s", held.key)

    return beating(renew, every=every, name=f"renew-{held.key}")
