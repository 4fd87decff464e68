"""The threshold explorer: a run's sweep (answer and refusal rates had the trust threshold been t) as a table and
a small server-rendered SVG chart, with the guru's current threshold marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 640, 250
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 14, 40
MAX_POINTS = 101
"""A sweep read from the database is cut at this many points, whatever it holds."""


@dataclass(frozen=True)
class SweepPoint:
    threshold: float
    answer_rate: float | None
    refusal_rate: float | None
    unrelated_refusal: float | None
    near_miss_refusal: float | None
    current: bool = False
    run: bool = False


@dataclass(frozen=True)
class Line:
    key: str
    label: str
    css_class: str  # also carries the dash pattern, so the lines differ without colour


LINES = (
    Line("answer_rate", "answer rate (in scope)", "answer"),
    Line("refusal_rate", "refusal rate (to refuse)", "refusal"),
    Line("near_miss_refusal", "near misses refused", "near-miss"),
)


def _rate(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _same(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def sweep_points(summary: Mapping[str, Any], *, current: float, run_threshold: float) -> list[SweepPoint]:
    """The sweep stored with the run, ordered by threshold, with the current and the run's threshold marked."""
    raw = summary.get("sweep")
    points = []
    for entry in (raw if isinstance(raw, list) else [])[:MAX_POINTS]:
        if not isinstance(entry, dict) or _rate(entry.get("threshold")) is None:
            continue
        t = round(float(entry["threshold"]), 4)
        points.append(SweepPoint(t, answer_rate=_rate(entry.get("answer_rate")),
                                 refusal_rate=_rate(entry.get("refusal_rate")),
                                 unrelated_refusal=_rate(entry.get("unrelated_refusal")),
                                 near_miss_refusal=_rate(entry.get("near_miss_refusal")),
                                 current=_same(t, current), run=_same(t, run_threshold)))
    return sorted(points, key=lambda p: p.threshold)


def _x(threshold: float) -> float:
    return LEFT + threshold * (WIDTH - LEFT - RIGHT)


def _y(rate: float) -> float:
    return TOP + (1 - rate) * (HEIGHT - TOP - BOTTOM)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _paths(points: Sequence[SweepPoint], key: str) -> list[str]:
    """Polyline runs of one series; a threshold where the rate is unmeasurable breaks the line."""
    runs: list[list[str]] = [[]]
    for point in points:
        rate = getattr(point, key)
        if rate is None:
            runs.append([])
        else:
            runs[-1].append(f"{_n(_x(point.threshold))},{_n(_y(rate))}")
    return [" ".join(run) for run in runs if run]


def _axes() -> list[str]:
    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y, x = _y(tick), _x(tick)
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_n(y)}" y2="{_n(y)}"/>')
        parts.append(f'<text class="tick" x="{LEFT - 6}" y="{_n(y + 4)}" text-anchor="end">{tick:.2f}</text>')
        parts.append(f'<text class="tick" x="{_n(x)}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{tick:.2f}'
                     "</text>")
    parts.append(f'<text class="axis-label" x="{_n((LEFT + WIDTH - RIGHT) / 2)}" y="{HEIGHT - 6}" '
                 'text-anchor="middle">trust threshold</text>')
    return parts


def sweep_chart(points: Sequence[SweepPoint], *, current: float) -> SafeString:
    """Three rates against the threshold, and a dashed vertical line at the current threshold."""
    if not points:
        return mark_safe("")
    desc = (f"Answer rate, refusal rate and near-miss refusal rate for trust thresholds from "
            f"{points[0].threshold:.2f} to {points[-1].threshold:.2f}; the current threshold is {current:.2f}.")
    parts = [f'<svg class="chart sweep-chart" role="img" aria-labelledby="sweep-title sweep-desc" width="{WIDTH}" '
             f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
             '<title id="sweep-title">Rates by trust threshold</title>',
             f'<desc id="sweep-desc">{escape(desc)}</desc>', *_axes()]
    for line in LINES:
        for path in _paths(points, line.key):
            parts.append(f'<polyline class="series {line.css_class}" points="{path}"><title>{escape(line.label)}'
                         "</title></polyline>")
    x = _n(_x(min(max(current, 0.0), 1.0)))
    parts.append(f'<line class="current" x1="{x}" x2="{x}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>')
    # Inside the plot, just right of the line and above the x axis, where it covers no curve's top.
    parts.append(f'<text class="current-label" x="{_n(_x(min(max(current, 0.0), 1.0)) + 4)}" '
                 f'y="{HEIGHT - BOTTOM - 6}" text-anchor="start">current {current:.2f}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308  # every text above is a number or escaped
