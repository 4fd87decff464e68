"""Evaluation actions beside running: applying a threshold chosen from a run, and choosing a command's set."""

from __future__ import annotations

from pathlib import Path

from backend.core.errors import NotFound, RequestError
from backend.evaluation.models import EvalSet
from backend.evaluation.sets import MAX_FILE_BYTES, SetFileError, parse_jsonl, set_cases
from backend.gurus.models import Guru
from backend.pipeline.evaluation import EvalCase


def threshold_apply(guru: Guru, threshold: float) -> float | None:
    """Give the guru its own trust threshold (as chosen in the threshold explorer); returns the previous one."""
    if not 0.0 <= threshold <= 1.0:
        raise RequestError(400, "invalid_threshold", "A trust threshold lies between 0 and 1.")
    previous = guru.trust_score_threshold
    Guru.objects.filter(pk=guru.pk).update(trust_score_threshold=round(threshold, 4))
    guru.trust_score_threshold = round(threshold, 4)
    return previous


def cases_for(guru: Guru, choice: str) -> tuple[str, list[EvalCase], EvalSet | None]:
    """(name, cases, set) for `evaluate --set`: a JSONL file, else one of the guru's sets by name; with no
    choice, the guru's only set."""
    path = Path(choice) if choice else None
    if path is not None and path.is_file():
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SetFileError(f"{path} is larger than {MAX_FILE_BYTES // 1_000_000} MB.")
        return path.name, parse_jsonl(path.read_text(encoding="utf-8")), None
    sets = EvalSet.objects.filter(guru=guru)
    chosen = sets.filter(name=choice).first() if choice else (sets.first() if sets.count() == 1 else None)
    if chosen is None:
        names = ", ".join(sets.values_list("name", flat=True)) or "none yet"
        raise NotFound(f"No file or set '{choice}' for guru {guru.slug} (its sets: {names}). Pass --set with a "
                       "JSONL file or a set's name." if choice else
                       f"Guru {guru.slug} has {sets.count()} sets ({names}): choose one with --set NAME or FILE.")
    return chosen.name, set_cases(chosen), chosen
