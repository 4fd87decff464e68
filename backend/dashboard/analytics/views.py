"""The analytics page of a guru: numbers and server-rendered SVG charts over 7, 30 or 90 days."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET

from backend.answering.selectors import thresholds_for
from backend.dashboard.access import guru_view
from backend.dashboard.analytics import charts
from backend.dashboard.analytics.selectors import PERIODS, GuruAnalytics, guru_analytics, period_from
from backend.gurus.models import Guru

# About the widths (px) the page shows the charts at, so that their text keeps its CSS size.
FULL_WIDTH, WIDE_WIDTH, HALF_WIDTH = 1100, 700, 520


def _day_label(data: GuruAnalytics, index: int) -> str:
    day = data.days[index].day
    return f"{day:%b} {day.day}"


def _charts(data: GuruAnalytics, trust_threshold: float) -> dict[str, SafeString]:
    labels = [_day_label(data, i) for i in range(len(data.days))]
    tooltips = [f"{d.day:%a %d %b %Y}" for d in data.days]
    busiest = max(data.days, key=lambda d: d.total)
    summary = data.summary
    return {
        "per_day": charts.bar_chart(
            chart_id="chart-per-day", title=f"Questions per day, last {data.period} days", labels=labels,
            series=[charts.Series("questions", "bar-total", [d.total for d in data.days])], y_label="Questions",
            tooltips=tooltips, width=FULL_WIDTH,
            desc=f"{summary.total} questions; the busiest day was {tooltips[data.days.index(busiest)]} "
                 f"with {busiest.total}.",
        ),
        "outcomes": charts.bar_chart(
            chart_id="chart-outcomes", title="Answered, refused and unfinished questions per day", labels=labels,
            series=[charts.Series("answered", "bar-answered", [d.answered for d in data.days]),
                    charts.Series("refused", "bar-refused", [d.refused for d in data.days]),
                    charts.Series("unfinished", "bar-unfinished", [d.unfinished for d in data.days])],
            y_label="Questions", tooltips=tooltips, width=WIDE_WIDTH,
            desc=f"{summary.answered} answered, {summary.refused} refused, {summary.unfinished} unfinished.",
        ),
        "outcome_share": charts.donut_chart(
            chart_id="chart-outcome-share", title="Share of answered and refused questions",
            slices=[charts.Series("answered", "slice-answered", [summary.answered]),
                    charts.Series("refused", "slice-refused", [summary.refused]),
                    charts.Series("unfinished", "slice-unfinished", [summary.unfinished])],
            center=str(summary.total),
            desc=f"{summary.answered} answered, {summary.refused} refused of {summary.total}.",
        ),
        "trust": charts.line_chart(
            chart_id="chart-trust", title="Average trust score of answered questions per day", labels=labels,
            values=[d.avg_trust for d in data.days], y_label="Trust score", tooltips=tooltips,
            reference=trust_threshold, reference_label=f"threshold {trust_threshold:.2f}", width=FULL_WIDTH,
            desc="Days without answered questions are gaps in the line.",
        ),
        "sources": charts.hbar_chart(
            chart_id="chart-sources", title="Most cited sources", x_label="Answers citing the source", width=HALF_WIDTH,
            bars=[charts.Bar(s.title, s.count, f"{s.title}: cited by {s.count} answers") for s in data.top_sources],
        ),
    }


@guru_view
@require_GET
def analytics(request: HttpRequest, guru: Guru) -> HttpResponse:
    data = guru_analytics(guru=guru, period=period_from(request.GET.get("days")))
    _, trust_threshold = thresholds_for(guru)
    context = {"guru": guru, "data": data, "charts": _charts(data, trust_threshold), "periods": PERIODS,
               "trust_threshold": trust_threshold}
    return render(request, "dashboard/analytics/page.html", context)
