"""Calls on a collection Milvus has just created, retried while Milvus still says it does not exist.

Milvus can answer "collection does not exist" to the index or load call that follows a successful create
(milvus-io/milvus#44507, open, reported on a cluster): the collection is there a moment later. Those calls are
retried for a bounded time; any other error, or the same one past the bound, is raised.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from pymilvus import MilvusException

from backend.pipeline.errors import VectorStoreError

logger = logging.getLogger(__name__)
T = TypeVar("T")
FRESH_COLLECTION_WAIT_S = 10.0
MISSING_COLLECTION_CODE = 100


def is_missing_collection_error(exc: BaseException | None) -> bool:
    """Milvus said the collection does not exist."""
    if not isinstance(exc, MilvusException):
        return False
    message = str(exc.message).lower()
    return exc.code == MISSING_COLLECTION_CODE or "does not exist" in message or "can't find collection" in message


def on_fresh_collection(call: Callable[[], T], *, wait_s: float = FRESH_COLLECTION_WAIT_S,
                        sleep: Callable[[float], None] = time.sleep,
                        clock: Callable[[], float] = time.monotonic) -> T:
    """`call`'s result, trying again (50 ms, doubling to 1 s) while it fails because the collection it was just
    created does not exist yet, for at most `wait_s`."""
    deadline, delay = clock() + wait_s, 0.05
    while True:
        try:
            return call()
        except VectorStoreError as exc:
            if not is_missing_collection_error(exc.__cause__) or clock() >= deadline:
                raise
            logger.info("Milvus does not see the collection it just created yet; trying again: %s", exc)
            sleep(delay)
            delay = min(delay * 2, 1.0)
