"""Runs side by side: one row per figure, each value with its change against the previous run of the same set."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.evaluation.models import EvalRun, RunState

REGRESSION = 0.02
"""A rate this much lower than the previous run's is marked as a regression."""
MINUS = "\u2212"


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    kind: str = "rate"  # "rate" (0–1, higher is better), "count", "usd" or "ms"


FIGURES = (
    Figure("recall", "recall@{k}"),
    Figure("mrr", "MRR"),
    Figure("hit_before", "hit@{k} before trust"),
    Figure("answer_rate", "answer rate"),
    Figure("refusal_rate", "refusal rate"),
    Figure("unrelated_refusal", "unrelated refused"),
    Figure("near_miss_refusal", "near misses refused"),
    Figure("fact_coverage", "fact coverage"),
    Figure("citation_validity", "citation validity"),
    Figure("groundedness", "groundedness (judge)"),
    Figure("tokens", "tokens", "count"),
    Figure("cost_usd", "cost", "usd"),
    Figure("latency_p50", "p50 total latency", "ms"),
)


@dataclass(frozen=True)
class Cell:
    """One run's value of one figure, and how it moved since the previous run."""

    value: str
    delta: str = ""
    css_class: str = ""  # "regression", "improved" or ""
    title: str = ""

    @property
    def regression(self) -> bool:
        return self.css_class == "regression"


@dataclass(frozen=True)
class FigureRow:
    label: str
    cells: list[Cell]


def figure_value(summary: Mapping[str, Any], key: str) -> float | None:
    """A figure of a run's summary; the p50 of the whole answer for latency. None when not measured."""
    if key == "latency_p50":
        total = (summary.get("latency") or {}).get("total") or {}
        value = total.get("p50")
    else:
        value = summary.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


FORMATS: dict[str, Callable[[float], str]] = {
    "rate": lambda v: f"{v:.3f}", "count": lambda v: f"{int(v):,}", "usd": lambda v: f"${v:.4f}",
    "ms": lambda v: f"{int(v):,} ms",
}


def _signed(kind: str, change: float) -> str:
    text = FORMATS[kind](abs(change)).removesuffix(" ms")
    return f"+{text}" if change > 0 else f"{MINUS}{text}"


def cell(figure: Figure, value: float | None, before: float | None) -> Cell:
    """The value, and the change against `before`: ▲/▼ with the signed difference; a rate falling by more than
    REGRESSION is a regression (marked by class, by the word and by the arrow, never by colour alone)."""
    if value is None:
        return Cell("—")
    text = FORMATS[figure.kind](value)
    if before is None:
        return Cell(text)
    change = round(value - before, 6)
    if abs(change) < 0.0005:
        return Cell(text, "= no change", "", "Same as the previous run of this set")
    arrow = "▲" if change > 0 else "▼"
    delta = f"{arrow} {_signed(figure.kind, change)}"
    if figure.kind != "rate":
        return Cell(text, delta, "", "Change since the previous run of this set")
    if change < -REGRESSION:
        return Cell(text, delta, "regression", f"Regression: more than {REGRESSION} below the previous run")
    return Cell(text, delta, "improved" if change > REGRESSION else "", "Change since the previous run of this set")


def _set_key(run: EvalRun) -> tuple[str, object]:
    return ("id", run.eval_set_id) if run.eval_set_id else ("name", run.set_name)


def previous_runs(runs: Sequence[EvalRun]) -> dict[int, EvalRun | None]:
    """For each run (newest first), the next older finished run of the same set among `runs`."""
    found: dict[int, EvalRun | None] = {}
    for index, run in enumerate(runs):
        key = _set_key(run)
        found[run.pk] = next((older for older in runs[index + 1:]
                              if older.state == RunState.DONE and _set_key(older) == key), None)
    return found


def figure_rows(runs: Sequence[EvalRun], previous: Mapping[int, EvalRun | None]) -> list[FigureRow]:
    """One row per figure, one cell per run; a run not finished shows dashes."""
    k = next((run.summary.get("k") for run in runs if run.summary.get("k")), 5)
    rows = []
    for figure in FIGURES:
        cells = []
        for run in runs:
            before = previous.get(run.pk)
            value = figure_value(run.summary, figure.key) if run.state == RunState.DONE else None
            cells.append(cell(figure, value, figure_value(before.summary, figure.key) if before else None))
        rows.append(FigureRow(figure.label.format(k=k), cells))
    return rows
