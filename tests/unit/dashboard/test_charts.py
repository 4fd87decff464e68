"""The SVG chart builder: round axis ticks, escaped labels, gaps in lines, accessible markup."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest

from backend.dashboard.analytics.charts import Bar, Series, bar_chart, donut_chart, hbar_chart, line_chart, nice_ticks

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '</text><script>alert(1)</script>&"\''


def parse(svg: str) -> ElementTree.Element:
    """Well-formed XML is the first proof that nothing leaked out of an attribute or text node."""
    return ElementTree.fromstring(svg)


@pytest.mark.parametrize(("maximum", "ticks"), [
    (0, [0, 1]), (1, [0, 1]), (3, [0, 1, 2, 3]), (7, [0, 2, 4, 6, 8]), (10, [0, 5, 10]),
    (37, [0, 10, 20, 30, 40]), (334, [0, 100, 200, 300, 400]), (1000, [0, 500, 1000]),
])
def test_ticks_are_round_and_cover_the_maximum(maximum: float, ticks: list[float]) -> None:
    assert nice_ticks(maximum) == ticks


def test_fractional_ticks() -> None:
    assert nice_ticks(0.9, integer=False) == [0.0, 0.5, 1.0]


def test_bar_chart_escapes_every_label_and_stays_well_formed() -> None:
    svg = bar_chart(chart_id=f"c{HOSTILE}", title=HOSTILE, labels=[HOSTILE, "b"], y_label=HOSTILE, x_label=HOSTILE,
                    series=[Series(HOSTILE, HOSTILE, [1, 2]), Series("b", "c", [0, 3])], tooltips=[HOSTILE, "t"],
                    desc=HOSTILE)
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    root = parse(svg)
    assert root.get("role") == "img" and root.find(f"{SVG}title").text == HOSTILE
    # The zero segment is not drawn; the stacked bar on "b" has two segments.
    assert len(root.findall(f"{SVG}rect")) == 3


def test_stacked_segments_sum_to_the_bar_height() -> None:
    root = parse(bar_chart(chart_id="c", title="t", labels=["a"], y_label="y",
                           series=[Series("x", "x", [2]), Series("y", "y", [2])]))
    first, second = root.findall(f"{SVG}rect")
    assert float(second.get("y")) + float(second.get("height")) == pytest.approx(float(first.get("y")))
    assert float(first.get("height")) == pytest.approx(float(second.get("height")))


def test_many_days_get_at_most_ten_axis_labels() -> None:
    labels = [f"d{i}" for i in range(90)]
    svg = bar_chart(chart_id="c", title="t", labels=labels, y_label="y", series=[Series("q", "q", [1] * 90)])
    assert re.findall(r">(d\d+)</text>", svg) == [f"d{i}" for i in range(8, 90, 9)]  # the last day included
    assert len(parse(svg).findall(f"{SVG}rect")) == 90


def test_line_chart_breaks_at_missing_values_and_escapes() -> None:
    svg = line_chart(chart_id="c", title=HOSTILE, labels=["a", "b", "c", "d", "e"], y_label="trust",
                     values=[0.5, 0.6, None, 0.9, 0.4], reference=0.5, reference_label=HOSTILE)
    root = parse(svg)
    paths = root.findall(f"{SVG}path")
    assert len(paths) == 2 and all(p.get("d", "").count("L") == 1 for p in paths)
    assert len(root.findall(f"{SVG}circle")) == 4 and "<script>" not in svg


def test_hbar_chart_shortens_before_escaping() -> None:
    long_title = "<" * 80
    svg = hbar_chart(chart_id="c", title="t", x_label="n", bars=[Bar(long_title, 3), Bar(HOSTILE, 1)])
    root = parse(svg)
    labels = [t.text for t in root.findall(f"{SVG}text") if t.get("class") == "bar-label"]
    assert labels == ["<" * 29 + "…", HOSTILE[:29] + "…"]
    assert "<script>" not in svg


def test_donut_handles_zero_totals() -> None:
    root = parse(donut_chart(chart_id="d", title="t", center="0", slices=[Series("a", "a", [0])]))
    assert len(root.findall(f"{SVG}circle")) == 1  # only the empty ring
    root = parse(donut_chart(chart_id="d", title="t", center="4", slices=[Series("a", "a", [3]),
                                                                           Series("b", "b", [1])]))
    dashes = [c.get("stroke-dasharray") for c in root.findall(f"{SVG}circle")[1:]]
    assert dashes == ["75.00 25.00", "25.00 75.00"]
