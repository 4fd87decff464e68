"""The ingestion budget stops a source at the first bound it passes and names that bound and its setting."""

from __future__ import annotations

import pytest

from backend.pipeline.budget import BudgetExceeded, BudgetLimits, IngestBudget, TextMeter, resident_mb
from backend.pipeline.errors import PermanentServiceError

LIMITS = BudgetLimits(max_chars=1000, max_chunks=10, max_seconds=60, max_memory_mb=100)


class Dial:
    """A value the test turns (the clock's seconds, the process's megabytes)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


def budget(clock: Dial | None = None, memory: Dial | None = None) -> IngestBudget:
    return IngestBudget(LIMITS, what="this PDF", clock=clock or Dial(0), memory=memory or Dial(500))


def test_text_up_to_the_bound_passes_and_one_more_character_stops() -> None:
    spent = budget()
    spent.take_text(600)
    spent.take_text(400)
    with pytest.raises(BudgetExceeded) as caught:
        spent.take_text(1)
    assert str(caught.value) == ("stopped: this PDF holds more than 1,000 characters of text "
                                 "(OPENGURU_SOURCE_MAX_CHARS)")
    assert isinstance(caught.value, PermanentServiceError)  # the source fails; the task is not retried


def test_pending_text_is_judged_without_being_charged() -> None:
    spent = budget()
    spent.check_text(1000)
    with pytest.raises(BudgetExceeded, match="OPENGURU_SOURCE_MAX_CHARS"):
        spent.check_text(1001)
    assert spent.chars == 0


def test_chunks_over_the_bound_stop() -> None:
    spent = budget()
    spent.take_chunks(10)
    with pytest.raises(BudgetExceeded) as caught:
        spent.take_chunks(1)
    assert str(caught.value) == "stopped: this PDF makes more than 10 chunks (OPENGURU_SOURCE_MAX_CHUNKS)"


def test_wall_time_counts_from_the_start_of_the_run() -> None:
    clock = Dial(1000)
    spent = budget(clock=clock)
    clock.value = 1060
    spent.check()
    clock.value = 1060.5
    with pytest.raises(BudgetExceeded) as caught:
        spent.take_text(1)
    assert str(caught.value) == "stopped: indexing this PDF took longer than 60 s (OPENGURU_SOURCE_MAX_SECONDS)"


def test_memory_is_the_growth_since_the_start_not_what_the_worker_held_before() -> None:
    memory = Dial(900)  # a worker that already holds the embedding model
    spent = budget(memory=memory)
    memory.value = 1000
    spent.check()
    memory.value = 1001
    with pytest.raises(BudgetExceeded) as caught:
        spent.take_chunks(1)
    assert str(caught.value) == ("stopped: indexing this PDF took 101 MB more memory than the 100 MB allowed "
                                 "(OPENGURU_SOURCE_MAX_MEMORY_MB)")


def test_the_text_meter_checks_inside_one_unit() -> None:
    clock = Dial(0)
    meter = TextMeter(budget(clock=clock))
    meter.add(999)
    with pytest.raises(BudgetExceeded, match="OPENGURU_SOURCE_MAX_CHARS"):
        meter.add(2)
    slow = TextMeter(IngestBudget(BudgetLimits(10**9, 10, 60, 100), clock=clock, memory=Dial(0)))
    clock.value = 61
    slow.add(100)  # time is looked at every CHECK_EVERY_CHARS characters, not on every fragment
    with pytest.raises(BudgetExceeded, match="OPENGURU_SOURCE_MAX_SECONDS"):
        slow.add(20_000)


def test_resident_memory_is_measured() -> None:
    before = resident_mb()
    ballast = bytearray(64 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page so it is resident
    assert resident_mb() - before >= 60
    del ballast
