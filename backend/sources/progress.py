"""How far an index run is: done/total written to the source row, and the generation GitHub chunks live in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from backend.sources.models import DataSource

PROGRESS_EVERY_SECONDS = 0.5
# GitHub chunks are replaced file by file (by blob sha), so they live in one constant generation.
INCREMENTAL_GENERATION = 0


@dataclass
class Progress:
    """Writes done/total to the source row at most every half second (the dashboard polls it).

    Only set_total and done reaching the total write at once; update_total (a crawl's growing estimate)
    waits for the next periodic write, so a fast crawl costs no extra DB write per page.
    """

    source_id: int
    run: int
    done: int = 0
    total: int = 0
    clock: Callable[[], float] = time.monotonic
    _last: float = 0.0

    def set_total(self, total: int) -> None:
        self.total = max(total, self.done)
        self._write(force=True)

    def update_total(self, total: int) -> None:
        """A new estimate of the total (a crawl finding pages); the next periodic write carries it."""
        self.total = max(total, self.done)

    def advance(self, step: int = 1) -> None:
        self.done += step
        self.total = max(self.total, self.done)
        self._write(force=self.done == self.total)

    def _write(self, *, force: bool) -> None:
        now = self.clock()
        if force or now - self._last >= PROGRESS_EVERY_SECONDS:
            self._last = now
            DataSource.objects.filter(pk=self.source_id, generation=self.run).update(
                progress_done=self.done, progress_total=self.total
            )
