"""An evaluation run's figures from its questions' scores: rates, ranks, calibration, thresholds and gates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean, median
from typing import Any

NEAR_MISS = "near_miss"
UNRELATED = "unrelated"
CALIBRATION_BUCKETS = 5
SWEEP_STEP = 0.05

GATES: dict[str, str] = {
    "recall": "recall@k of the final references",
    "mrr": "MRR of the final references",
    "hit_before": "hit@k before the trust step",
    "answer_rate": "answer rate (questions in scope)",
    "refusal_rate": "refusal rate (questions to refuse)",
    "near_miss_refusal": "refusal rate of near misses",
    "fact_coverage": "expected-fact coverage",
    "citation_validity": "citation validity",
}
"""The figures a run can be gated on (`evaluate --min-<name>`), with how the report names them."""


def _mean(values: Sequence[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def _percentile(values: Sequence[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def stage_latency(scores: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Median and 95th percentile milliseconds of every timed stage (keys ending in _ms)."""
    stages: dict[str, list[int]] = {}
    for score in scores:
        for key, value in score["timings"].items():
            if key.endswith("_ms"):
                stages.setdefault(key.removesuffix("_ms"), []).append(int(value))
    return {stage: {"p50": int(median(values)), "p95": _percentile(values, 0.95), "n": len(values)}
            for stage, values in sorted(stages.items())}


def refusal_rates(scores: Sequence[Mapping[str, Any]], threshold: float | None = None) -> dict[str, float | None]:
    """Share refused of the questions to refuse, overall and by kind; with `threshold`, as that threshold would."""
    def refused(score: Mapping[str, Any]) -> bool:
        return bool(score["refused"]) if threshold is None else score["trust"] < threshold

    rates: dict[str, float | None] = {}
    for name, kinds in (("refusal_rate", (UNRELATED, NEAR_MISS)), ("unrelated_refusal", (UNRELATED,)),
                        ("near_miss_refusal", (NEAR_MISS,))):
        rates[name] = _mean([float(refused(s)) for s in scores if s["refusal_kind"] in kinds])
    return rates


def calibration(scores: Sequence[Mapping[str, Any]], buckets: int = CALIBRATION_BUCKETS) -> list[dict[str, Any]]:
    """Trust bucket → how many questions fell in it and the share whose evidence was right (grounded)."""
    rows = []
    for b in range(buckets):
        low, high = b / buckets, (b + 1) / buckets
        inside = [s for s in scores if low <= s["trust"] < high or (b == buckets - 1 and s["trust"] >= 1.0)]
        rows.append({"low": round(low, 2), "high": round(high, 2), "n": len(inside),
                     "grounded": _mean([float(s["grounded"]) for s in inside])})
    return rows


def sweep(scores: Sequence[Mapping[str, Any]], step: float = SWEEP_STEP) -> list[dict[str, Any]]:
    """Answer rate and refusal rates had the trust threshold been t, for t from 0 to 1: each question's
    trust score was computed whatever the threshold, so this replays the decision exactly."""
    points = []
    for i in range(int(round(1 / step)) + 1):
        threshold = round(i * step, 4)
        in_scope = [s for s in scores if not s["refusal_kind"]]
        point: dict[str, Any] = {"threshold": threshold,
                                 "answer_rate": _mean([float(s["trust"] >= threshold) for s in in_scope])}
        point.update(refusal_rates(scores, threshold))
        points.append(point)
    return points


def summarise(scores: Sequence[Mapping[str, Any]], *, k: int) -> dict[str, Any]:
    """The run's figures. Rates are None when the set has no question of that kind."""
    in_scope = [s for s in scores if not s["refusal_kind"]]
    answered = [s for s in in_scope if not s["refused"]]
    with_facts = [s for s in in_scope if s["facts_total"]]
    citations = sum(s["citations_total"] for s in scores)
    judged = [s["judge"] for s in scores if s.get("judge") is not None]
    summary: dict[str, Any] = {
        "k": k, "questions": len(scores), "in_scope": len(in_scope),
        "to_refuse": len(scores) - len(in_scope),
        "recall": _mean([s["recall"] for s in in_scope]),
        "mrr": _mean([1 / s["rank"] if s["rank"] else 0.0 for s in in_scope]),
        "hit_before": _mean([float(bool(s["hit_before"])) for s in in_scope]),
        "answer_rate": _mean([float(not s["refused"]) for s in in_scope]),
        **refusal_rates(scores),
        "fact_coverage": _mean([s["facts"] / s["facts_total"] for s in with_facts]),
        "citation_validity": round(sum(s["citations_valid"] for s in scores) / citations, 4) if citations else None,
        "groundedness": _mean(judged),
        "tokens": sum(s["tokens"] for s in scores),
        "cost_usd": round(sum(s["cost_usd"] for s in scores), 6),
        "calibration": calibration(scores),
        "latency": stage_latency(scores),
        "answered": len(answered),
        "errors": sum(1 for s in scores if s.get("error")),
        "categories": by_category(scores),
    }
    return summary


def by_category(scores: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per category: how many, and the share handled right (answered from the right source, or refused)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for score in scores:
        groups.setdefault(score["category"] or "uncategorised", []).append(score)
    return {name: {"n": len(group), "right": _mean([float(case_right(s)) for s in group])}
            for name, group in sorted(groups.items())}


def case_right(score: Mapping[str, Any]) -> bool:
    """Refused if it should be; otherwise answered with an expected source among the references."""
    if score["refusal_kind"]:
        return bool(score["refused"])
    return not score["refused"] and score["rank"] is not None


def gate(summary: Mapping[str, Any], minimums: Mapping[str, float]) -> list[str]:
    """The thresholds a run missed, worded for a CI log; a figure the set cannot measure is a miss too, and so is
    any question that failed with an error (the figures then measure the failure, not the guru)."""
    missed, k = [], summary.get("k", "k")
    if summary.get("errors"):
        missed.append(f"{summary['errors']} of {summary['questions']} questions failed with an error, so the figures "
                      "do not measure the guru")
    for name, minimum in minimums.items():
        value, label = summary.get(name), GATES[name].replace("@k", f"@{k}")
        if value is None:
            missed.append(f"{label}: not measurable on this set (needs questions of that kind)")
        elif value < minimum:
            missed.append(f"{label}: {value:.3f} < {minimum:.3f}")
    return missed


def _figure(value: object) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def report_text(summary: Mapping[str, Any]) -> list[str]:
    """The report as lines of text (the `evaluate` command prints them)."""
    k = summary["k"]
    lines = [f"{summary['questions']} questions: {summary['in_scope']} in scope, {summary['to_refuse']} to refuse"]
    if summary.get("unsettled"):
        lines.append(f"  NOT SETTLED: measured while the guru was still building ({'; '.join(summary['unsettled'])}): "
                     "its answers may change when that is done; run again then to compare runs")
    if summary.get("errors"):
        lines.append(f"  FAILED with an error: {summary['errors']} (counted as refused; see each question's error)")
    lines += [f"  {GATES[name].replace('@k', f'@{k}')}: {_figure(summary[name])}" for name in GATES]
    lines.append(f"  refusal rate of unrelated questions: {_figure(summary['unrelated_refusal'])}")
    if summary.get("groundedness") is not None:
        lines.append(f"  groundedness (LLM judge): {_figure(summary['groundedness'])}")
    lines.append(f"  tokens: {summary['tokens']}  cost: ${summary['cost_usd']:.4f}")
    lines.append("trust calibration (trust bucket → share with the right evidence):")
    lines += [f"  {row['low']:.1f}–{row['high']:.1f}: n={row['n']} grounded={_figure(row['grounded'])}"
              for row in summary["calibration"]]
    lines.append("latency per stage (ms, p50 / p95):")
    lines += [f"  {stage}: {row['p50']} / {row['p95']}" for stage, row in summary["latency"].items()]
    lines.append("by category (share handled right):")
    lines += [f"  {name}: {row['right']:.2f} of {row['n']}" for name, row in summary["categories"].items()]
    return lines
