"""Small server-rendered SVG charts (bars, stacked bars, a line, horizontal bars, a donut); every label is escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 20, 16, 48
MAX_X_LABELS = 10
HBAR_ROW, HBAR_LABEL_WIDTH, HBAR_LABEL_CHARS = 28, 200, 30


@dataclass(frozen=True)
class Series:
    """One stacked layer of a bar chart; `css_class` colours it (see dashboard-analytics.css)."""

    name: str
    css_class: str
    values: Sequence[float]


@dataclass(frozen=True)
class Bar:
    """One row of a horizontal bar chart."""

    label: str
    value: float
    tooltip: str = ""


def _num(value: float) -> str:
    """Coordinates with at most one decimal, so the markup stays small and stable."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def nice_ticks(maximum: float, *, count: int = 4, integer: bool = True) -> list[float]:
    """Evenly spaced axis ticks from 0 to a round number ≥ maximum (1, 2 or 5 times a power of ten apart)."""
    if maximum <= 0:
        return [0.0, 1.0]
    raw = maximum / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    steps = math.ceil(maximum / step - 1e-9)
    return [round(i * step, 10) for i in range(steps + 1)]


def _open(chart_id: str, title: str, desc: str, size: tuple[int, int], css_class: str) -> list[str]:
    cid = escape(chart_id)
    return [
        f'<svg class="chart {escape(css_class)}" role="img" aria-labelledby="{cid}-title {cid}-desc" '
        f'width="{size[0]}" height="{size[1]}" viewBox="0 0 {size[0]} {size[1]}" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{cid}-title">{escape(title)}</title><desc id="{cid}-desc">{escape(desc)}</desc>',
    ]


def _text(x: float, y: float, label: str, css_class: str, anchor: str = "middle", extra: str = "") -> str:
    return (f'<text x="{_num(x)}" y="{_num(y)}" class="{escape(css_class)}" text-anchor="{anchor}"{extra}>'
            f"{escape(label)}</text>")


def _y_axis(ticks: Sequence[float], y_label: str, *, width: int, plot_height: float, fmt: str = "int") -> list[str]:
    parts, top = [], ticks[-1] or 1.0
    for tick in ticks:
        y = TOP + plot_height - tick / top * plot_height
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{width - RIGHT}" y1="{_num(y)}" y2="{_num(y)}"/>')
        label = _fmt(tick) if fmt == "int" else f"{tick:.1f}"
        parts.append(_text(LEFT - 8, y + 4, label, "tick", "end"))
    middle = TOP + plot_height / 2
    parts.append(_text(14, middle, y_label, "axis-label", "middle", f' transform="rotate(-90 14 {_num(middle)})"'))
    return parts


def _x_axis(labels: Sequence[str], x_label: str, *, width: int, slot: float, plot_height: float) -> list[str]:
    base = TOP + plot_height
    parts = [f'<line class="axis" x1="{LEFT}" x2="{width - RIGHT}" y1="{_num(base)}" y2="{_num(base)}"/>']
    every = max(1, math.ceil(len(labels) / MAX_X_LABELS))
    for i, label in enumerate(labels):
        if (len(labels) - 1 - i) % every == 0:  # counted from the end so that the latest day is always labelled
            parts.append(_text(LEFT + slot * (i + 0.5), base + 16, label, "tick"))
    parts.append(_text(LEFT + (width - LEFT - RIGHT) / 2, HEIGHT - 6, x_label, "axis-label"))
    return parts


def bar_chart(*, chart_id: str, title: str, labels: Sequence[str], series: Sequence[Series], y_label: str,
              x_label: str = "Day", tooltips: Sequence[str] | None = None, desc: str = "",
              width: int = WIDTH) -> SafeString:
    """Vertical bars per label, stacked when there are several series; each segment has a tooltip.

    `width` should be about the width the chart is shown at, so that its text keeps its CSS size.
    """
    plot_height = HEIGHT - TOP - BOTTOM
    totals = [sum(s.values[i] for s in series) for i in range(len(labels))]
    ticks = nice_ticks(max(totals, default=0))
    slot = (width - LEFT - RIGHT) / max(len(labels), 1)
    bar_width = max(slot * 0.72, 1.0)
    parts = _open(chart_id, title, desc or title, (width, HEIGHT), "chart-bars")
    parts += _y_axis(ticks, y_label, width=width, plot_height=plot_height)
    for i, label in enumerate(labels):
        base: float = TOP + plot_height
        x = LEFT + slot * i + (slot - bar_width) / 2
        name = tooltips[i] if tooltips else label
        for layer in series:
            value = layer.values[i]
            if value <= 0:
                continue
            height = value / ticks[-1] * plot_height
            base -= height
            parts.append(f'<rect class="{escape(layer.css_class)}" x="{_num(x)}" y="{_num(base)}" '
                         f'width="{_num(bar_width)}" height="{_num(height)}">'
                         f"<title>{escape(f'{name}: {_fmt(value)} {layer.name}')}</title></rect>")
    parts += _x_axis(labels, x_label, width=width, slot=slot, plot_height=plot_height)
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every label above went through escape()


def _segments(points: Sequence[tuple[float, float] | None]) -> list[str]:
    """SVG path data, broken where a point is missing (a day without data is a gap, not a zero)."""
    paths: list[str] = []
    current: list[tuple[float, float]] = []
    for point in [*points, None]:
        if point is None:
            if len(current) > 1:
                paths.append("M" + " L".join(f"{_num(x)} {_num(y)}" for x, y in current))
            current = []
        else:
            current.append(point)
    return paths


def line_chart(*, chart_id: str, title: str, labels: Sequence[str], values: Sequence[float | None], y_label: str,
               x_label: str = "Day", reference: float | None = None, reference_label: str = "",
               tooltips: Sequence[str] | None = None, desc: str = "", width: int = WIDTH) -> SafeString:
    """A 0–1 line with dots (gaps where a value is None) and an optional dashed reference line."""
    plot_height = HEIGHT - TOP - BOTTOM
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    slot = (width - LEFT - RIGHT) / max(len(labels), 1)
    points = [None if v is None else (LEFT + slot * (i + 0.5), TOP + plot_height * (1 - v))
              for i, v in enumerate(values)]
    parts = _open(chart_id, title, desc or title, (width, HEIGHT), "chart-line")
    parts += _y_axis(ticks, y_label, width=width, plot_height=plot_height, fmt="float")
    if reference is not None:
        y = TOP + plot_height * (1 - reference)
        parts.append(f'<line class="reference" x1="{LEFT}" x2="{width - RIGHT}" y1="{_num(y)}" y2="{_num(y)}"/>')
        parts.append(_text(width - RIGHT - 4, y - 5, reference_label, "reference-label", "end"))
    parts += [f'<path class="line" d="{d}"/>' for d in _segments(points)]
    for i, point in enumerate(points):
        if point is not None:
            name = tooltips[i] if tooltips else labels[i]
            parts.append(f'<circle class="dot" cx="{_num(point[0])}" cy="{_num(point[1])}" r="3.5">'
                         f"<title>{escape(f'{name}: {values[i]:.2f}')}</title></circle>")
    parts += _x_axis(labels, x_label, width=width, slot=slot, plot_height=plot_height)
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every label above went through escape()


def _shorten(label: str, limit: int = HBAR_LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1].rstrip() + "…"


def hbar_chart(*, chart_id: str, title: str, bars: Sequence[Bar], x_label: str, desc: str = "",
               width: int = WIDTH) -> SafeString:
    """Horizontal bars with their labels on the left and values at the ends (for ranked lists)."""
    height = TOP + HBAR_ROW * max(len(bars), 1) + 36
    left, right = HBAR_LABEL_WIDTH, width - RIGHT - 40
    top_value = max((b.value for b in bars), default=0) or 1
    parts = _open(chart_id, title, desc or title, (width, height), "chart-hbars")
    for i, bar in enumerate(bars):
        y = TOP + HBAR_ROW * i
        bar_width = max(bar.value / top_value * (right - left), 1.0)
        parts.append(_text(left - 10, y + 17, _shorten(bar.label), "bar-label", "end"))
        parts.append(f'<rect class="bar" x="{left}" y="{_num(y + 5)}" width="{_num(bar_width)}" '
                     f'height="{HBAR_ROW - 10}">'
                     f"<title>{escape(bar.tooltip or f'{bar.label}: {_fmt(bar.value)}')}</title></rect>")
        parts.append(_text(left + bar_width + 6, y + 17, _fmt(bar.value), "value", "start"))
    base = TOP + HBAR_ROW * max(len(bars), 1)
    parts.append(f'<line class="axis" x1="{left}" x2="{left}" y1="{TOP}" y2="{_num(base)}"/>')
    parts.append(_text(left + (right - left) / 2, base + 24, x_label, "axis-label"))
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every label above went through escape()


def donut_chart(*, chart_id: str, title: str, slices: Sequence[Series], center: str, desc: str = "") -> SafeString:
    """A ring split by share (each series' first value); the centre shows `center`."""
    total = sum(s.values[0] for s in slices)
    cid = escape(chart_id)
    out = [f'<svg class="chart chart-donut" role="img" aria-labelledby="{cid}-title {cid}-desc" viewBox="0 0 42 42" '
           'xmlns="http://www.w3.org/2000/svg">',
           f'<title id="{cid}-title">{escape(title)}</title><desc id="{cid}-desc">{escape(desc or title)}</desc>',
           '<circle class="ring" cx="21" cy="21" r="15.915" fill="none" stroke-width="6"/>']
    offset = 25.0  # a circumference of 100 starting at 12 o'clock
    for part in slices:
        share = part.values[0] / total * 100 if total else 0
        if share <= 0:
            continue
        out.append(f'<circle class="{escape(part.css_class)}" cx="21" cy="21" r="15.915" fill="none" '
                   f'stroke-width="6" stroke-dasharray="{share:.2f} {100 - share:.2f}" '
                   f'stroke-dashoffset="{offset:.2f}"><title>{escape(f"{part.name}: {_fmt(part.values[0])}")}'
                   "</title></circle>")
        offset -= share
    out.append(f'<text x="21" y="23.5" text-anchor="middle" class="donut-center">{escape(center)}</text></svg>')
    return mark_safe("".join(out))  # noqa: S308 - every label above went through escape()
