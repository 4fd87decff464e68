"""Bounds on what one source may take while it indexes: characters of text, chunks, wall time and memory."""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.pipeline.errors import PermanentServiceError

MIB = 1024 * 1024
# Time and memory are looked at every this many characters inside one unit (a PDF page), not on every fragment.
CHECK_EVERY_CHARS = 20_000


class BudgetExceeded(PermanentServiceError):
    """One of the source's bounds was hit; the message names the bound and the setting that raises it."""


@dataclass(frozen=True)
class BudgetLimits:
    """The bounds; each comes from the OPENGURU_SOURCE_MAX_* setting of the same name."""

    max_chars: int
    max_chunks: int
    max_seconds: float
    max_memory_mb: int


def resident_mb() -> float:
    """This process's resident memory now (Linux /proc), else its peak so far (getrusage, other systems)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        return peak / MIB if sys.platform == "darwin" else peak / 1024


@dataclass
class IngestBudget:
    """What one index run of a source may still take; every check raises BudgetExceeded once a bound is hit.

    `what` names the source in messages ("this PDF", "this repository"). Memory is the growth of the worker's
    resident memory since the run started, so a worker that already holds the embedding model is not charged
    for it. Checks run between units (pages, documents, embedding batches) and every CHECK_EVERY_CHARS
    characters inside a PDF page, so a bound stops the run within one step of being passed.
    """

    limits: BudgetLimits
    what: str = "this source"
    clock: Callable[[], float] = time.monotonic
    memory: Callable[[], float] = resident_mb
    chars: int = 0
    chunks: int = 0
    _started: float = field(init=False, default=0.0)
    _baseline_mb: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self._started = self.clock()
        self._baseline_mb = self.memory()

    def check_text(self, pending: int = 0) -> None:
        """Raise if the text taken so far plus `pending` characters not yet taken passes the bound."""
        if self.chars + pending > self.limits.max_chars:
            raise BudgetExceeded(f"stopped: {self.what} holds more than {self.limits.max_chars:,} characters of "
                                 "text (OPENGURU_SOURCE_MAX_CHARS)")

    def take_text(self, count: int) -> None:
        """Charge `count` characters of text to the source, then check every bound."""
        self.check_text(count)
        self.chars += count
        self.check()

    def take_chunks(self, count: int) -> None:
        """Charge `count` chunks (before they are embedded), then check every bound."""
        if self.chunks + count > self.limits.max_chunks:
            raise BudgetExceeded(f"stopped: {self.what} makes more than {self.limits.max_chunks:,} chunks "
                                 "(OPENGURU_SOURCE_MAX_CHUNKS)")
        self.chunks += count
        self.check()

    def check(self) -> None:
        """Wall time since the run started and memory growth since then."""
        elapsed = self.clock() - self._started
        if elapsed > self.limits.max_seconds:
            raise BudgetExceeded(f"stopped: indexing {self.what} took longer than {self.limits.max_seconds:,.0f} s "
                                 "(OPENGURU_SOURCE_MAX_SECONDS)")
        grown = self.memory() - self._baseline_mb
        if grown > self.limits.max_memory_mb:
            raise BudgetExceeded(f"stopped: indexing {self.what} took {grown:,.0f} MB more memory than the "
                                 f"{self.limits.max_memory_mb:,} MB allowed (OPENGURU_SOURCE_MAX_MEMORY_MB)")


class TextMeter:
    """Counts text as it is produced inside one unit (a PDF page's fragments) against a budget's text bound."""

    def __init__(self, budget: IngestBudget) -> None:
        self._budget = budget
        self.count = 0
        self._next_check = CHECK_EVERY_CHARS

    def add(self, count: int) -> None:
        self.count += count
        self._budget.check_text(self.count)
        if self.count >= self._next_check:
            self._next_check = self.count + CHECK_EVERY_CHARS
            self._budget.check()
