"""A call on a collection Milvus just created is retried while Milvus says it does not exist, within a bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pymilvus import MilvusException

from backend.adapters.vector_store.milvus_fresh import on_fresh_collection
from backend.pipeline.errors import VectorStoreError


class _Clock:
    """Time that passes only when the retry sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _failing(times: int, *, code: int = 100, message: str = "collection 'og_1' does not exist") -> Callable[[], str]:
    calls = {"n": 0}

    def call() -> str:
        calls["n"] += 1
        if calls["n"] <= times:
            try:
                raise MilvusException(code=code, message=message)
            except MilvusException as exc:
                raise VectorStoreError(f"Milvus failed to create indexes: {exc}") from exc
        return "created"

    return call


def test_a_missing_fresh_collection_is_tried_again_until_it_appears() -> None:
    clock = _Clock()
    assert on_fresh_collection(_failing(3), sleep=clock.sleep, clock=lambda: clock.now) == "created"
    assert clock.slept == [0.05, 0.1, 0.2]


def test_other_errors_and_a_collection_that_never_appears_are_raised() -> None:
    clock = _Clock()
    with pytest.raises(VectorStoreError, match="does not exist"):
        on_fresh_collection(_failing(100), wait_s=3.0, sleep=clock.sleep, clock=lambda: clock.now)
    assert 3.0 <= clock.now < 4.1  # the bound, then one last try
    other = _Clock()
    with pytest.raises(VectorStoreError, match="dimension"):
        on_fresh_collection(_failing(1, code=1100, message="dimension mismatch"), sleep=other.sleep,
                            clock=lambda: other.now)
    assert other.slept == []
