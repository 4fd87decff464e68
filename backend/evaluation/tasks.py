"""Celery entry point for evaluation runs; a thin wrapper over the runner."""

from __future__ import annotations

from typing import Any

from backend.core.tasks import openguru_task


@openguru_task("evaluation.run", max_retries=0)
def evaluation_run(self: Any, *, run_id: int) -> None:
    from backend.evaluation.runner import run_execute

    run_execute(run_id)
