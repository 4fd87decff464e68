"""One run's page: its calibration and per-category tables and one row per question, read from what it stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.evaluation.models import RefusalKind
from backend.pipeline.evaluation_report import case_right

MAX_REFERENCES = 8
_KINDS = dict(RefusalKind.choices)


@dataclass(frozen=True)
class QuestionRow:
    """One question of the run: what was expected, what the pipeline did, and whether that was right."""

    number: int
    question: str
    category: str
    expected: str  # "answer", or the kind of refusal expected
    refused: bool
    trust: float
    rank: int | None
    facts: str  # "found/total", "" without expected facts
    references: list[str]
    right: bool
    error: str


def _bool(value: object) -> bool:
    return bool(value) if isinstance(value, bool | int) else False


def _row(number: int, score: Mapping[str, Any]) -> QuestionRow | None:
    try:
        right = case_right(score)
    except (KeyError, TypeError):  # a row from another version of the scorer: shown by nothing rather than crash
        return None
    total = score.get("facts_total") or 0
    references = score.get("references")
    rank = score.get("rank")
    kind = str(score.get("refusal_kind") or "")
    return QuestionRow(
        number=number, question=str(score.get("question", "")), category=str(score.get("category") or ""),
        expected=_KINDS.get(kind, kind) if kind else "answer", refused=_bool(score.get("refused")),
        trust=float(score.get("trust") or 0.0), rank=rank if isinstance(rank, int) else None,
        facts=f"{score.get('facts', 0)}/{total}" if total else "",
        references=[str(r) for r in references[:MAX_REFERENCES]] if isinstance(references, list) else [],
        right=right, error=str(score.get("error") or ""))


def question_rows(results: Sequence[Any], *, wrong_only: bool = False) -> list[QuestionRow]:
    rows = [row for number, score in enumerate(results, start=1) if isinstance(score, dict)
            and (row := _row(number, score)) is not None]
    return [row for row in rows if not row.right] if wrong_only else rows


@dataclass(frozen=True)
class CalibrationRow:
    bucket: str
    n: int
    grounded: str


def calibration_rows(summary: Mapping[str, Any]) -> list[CalibrationRow]:
    """Trust bucket → how many questions and the share with the right evidence."""
    rows = []
    for entry in summary.get("calibration") or []:
        if isinstance(entry, dict):
            grounded = entry.get("grounded")
            rows.append(CalibrationRow(f"{float(entry.get('low', 0)):.1f}–{float(entry.get('high', 0)):.1f}",
                                       int(entry.get("n") or 0),
                                       "—" if grounded is None else f"{float(grounded):.2f}"))
    return rows


@dataclass(frozen=True)
class CategoryRow:
    name: str
    n: int
    right: str


def category_rows(summary: Mapping[str, Any]) -> list[CategoryRow]:
    categories = summary.get("categories") or {}
    return [CategoryRow(str(name), int(row.get("n") or 0),
                        "—" if row.get("right") is None else f"{float(row['right']):.2f}")
            for name, row in (categories.items() if isinstance(categories, dict) else []) if isinstance(row, dict)]


def latency_rows(summary: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """(stage, p50 ms, p95 ms) of every timed stage, the whole answer ("total") last."""
    latency = summary.get("latency") or {}
    stages = sorted(latency, key=lambda stage: (stage == "total", stage)) if isinstance(latency, dict) else []
    return [(stage.replace("_", " "), int(latency[stage].get("p50", 0)), int(latency[stage].get("p95", 0)))
            for stage in stages if isinstance(latency[stage], dict)]
