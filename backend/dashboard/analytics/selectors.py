"""A guru's question analytics over a period: per day counts, outcomes, trust, channels, feedback, cited sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Avg, Case, Count, IntegerField, Max, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from backend.answering.models import Citation, Question
from backend.dashboard.places import channel_label
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind

PERIODS = (7, 30, 90)
DEFAULT_PERIOD = 30
TOP_SOURCES = 10
_REFUSED = Q(out_of_context=True)
# A question that was neither refused nor answered failed or was interrupted mid-way.
_ANSWERED = Q(out_of_context=False) & ~Q(content="")



@dataclass(frozen=True)
class Day:
    """One calendar day (in the site's time zone) of the period; days without questions are zeros."""

    day: date
    total: int = 0
    answered: int = 0
    refused: int = 0
    avg_trust: float | None = None

    @property
    def unfinished(self) -> int:
        return self.total - self.answered - self.refused


@dataclass(frozen=True)
class Summary:
    """The period's totals and averages; averages are None without data."""

    total: int
    answered: int
    refused: int
    avg_trust: float | None
    avg_latency_ms: float | None
    feedback_up: int
    feedback_down: int
    cost_usd: Decimal

    @property
    def unfinished(self) -> int:
        return self.total - self.answered - self.refused

    @property
    def refused_share(self) -> float | None:
        return self.refused / self.total if self.total else None


@dataclass(frozen=True)
class CitedSource:
    """A source and how many answers of the period cite it; `deleted` when the source no longer exists."""

    source_id: int | None
    title: str
    link: str
    count: int
    deleted: bool = False
    page_of: str = ""
    """For one page of a sitemap or crawl source: that source's title (the entry itself is the page)."""


@dataclass(frozen=True)
class GuruAnalytics:
    period: int
    start: date
    end: date
    days: list[Day]
    summary: Summary
    channels: list[tuple[str, int]]
    top_sources: list[CitedSource]


def period_from(raw: str | None) -> int:
    """A period in days from the query string; anything but the offered periods gives the default."""
    try:
        days = int(raw or DEFAULT_PERIOD)
    except ValueError:
        return DEFAULT_PERIOD
    return days if days in PERIODS else DEFAULT_PERIOD


def _period_start(start: date) -> datetime:
    return timezone.make_aware(datetime.combine(start, time.min))


def _period_questions(guru: Guru, start: date) -> QuerySet[Question]:
    return Question.objects.filter(guru=guru, created_at__gte=_period_start(start)).order_by()


def _days(questions: QuerySet[Question], start: date, period: int) -> list[Day]:
    every_day = [start + timedelta(days=i) for i in range(period)]
    rows = (
        questions.annotate(bucket=_day_index(every_day))
        .values("bucket")
        .annotate(total=Count("id"), answered=Count("id", filter=_ANSWERED), refused=Count("id", filter=_REFUSED),
                  avg_trust=Avg("trust_score", filter=_ANSWERED))
        .order_by("bucket")
    )
    found = {row["bucket"]: row for row in rows}
    days = []
    for i, day in enumerate(every_day):
        row = found.get(i)
        days.append(Day(day=day) if row is None else Day(
            day=day, total=row["total"], answered=row["answered"], refused=row["refused"], avg_trust=row["avg_trust"]))
    return days


def _day_index(days: list[date]) -> Case | Value:
    """Which day of the period a row falls on, by comparing created_at with the local midnights.

    Portable and cheap: the boundaries are computed here (DST included), so the database compares timestamps
    instead of converting each row to local time (SQLite's TruncDate does that in Python, per row), and
    the CASEs nest as a binary search: ~7 comparisons a row for 90 days instead of ~45.
    """
    ends = [_period_start(day + timedelta(days=1)) for day in days]
    return _bisect(ends, 0, len(ends))


def _bisect(ends: list[datetime], low: int, high: int) -> Case | Value:
    """Index i in [low, high] of the first end a row is before (high: after them all)."""
    if low == high:
        return Value(low)
    middle = (low + high) // 2
    return Case(When(created_at__lt=ends[middle], then=_bisect(ends, low, middle)),
                default=_bisect(ends, middle + 1, high), output_field=IntegerField())


def _summary(questions: QuerySet[Question]) -> Summary:
    row = questions.aggregate(
        total=Count("id"), answered=Count("id", filter=_ANSWERED), refused=Count("id", filter=_REFUSED),
        avg_trust=Avg("trust_score", filter=_ANSWERED), avg_latency_ms=Avg("latency_ms", filter=Q(latency_ms__gt=0)),
        feedback_up=Count("id", filter=Q(feedback=1)), feedback_down=Count("id", filter=Q(feedback=-1)),
        cost_usd=Sum("cost_usd"),
    )
    row["cost_usd"] = Decimal(row["cost_usd"] or 0)
    return Summary(**row)


def _channels(questions: QuerySet[Question]) -> list[tuple[str, int]]:
    """Questions per channel; a chat channel per place, e.g. "Slack · Acme · #general" (other channels have none)."""
    rows = (questions.values("channel", place=Coalesce("binge__place", Value(""))).annotate(n=Count("id"))
            .order_by("-n", "channel", "place"))
    return [(channel_label(row["channel"], row["place"]), row["n"]) for row in rows]


def _safe_link(link: object) -> str:
    """Only http(s) and site-relative links: references are stored data, and a javascript: URL must not be a link."""
    text = str(link or "").strip()
    return text if text.startswith(("https://", "http://", "/")) and not text.startswith("//") else ""


def _source_link(row: Mapping[str, object]) -> str:
    if row["url"]:
        return _safe_link(row["url"])
    if row["kind"] == SourceKind.PDF and row["file"]:
        return reverse("answering:source-file", args=[row["pk"]])
    return ""


def _top_sources(guru: Guru, since: datetime) -> list[CitedSource]:
    """The most cited sources of the period, counted in SQL over citation rows (one per source per answer).

    A sitemap or crawl source counts per page: each of its pages is an entry of its own.
    """
    top = list(Citation.objects.filter(guru=guru, created_at__gte=since).values("source_id", "page_url")
               .annotate(count=Count("id"), cited_as=Max("title"), page_title=Max("page_title"))
               .order_by("-count", "source_id", "page_url")[:TOP_SOURCES * 2])
    cited_ids = {entry["source_id"] for entry in top}
    rows = {row["pk"]: row for row in DataSource.objects.filter(guru=guru, pk__in=cited_ids).values(
        "pk", "title", "url", "file", "kind", "options")}
    merged: dict[tuple[int, str], CitedSource] = {}
    for entry in top:
        row = rows.get(entry["source_id"])
        cited = _cited(entry, row)
        key = (entry["source_id"], entry["page_url"] if cited.page_of or cited.deleted else "")
        if key in merged:  # a single-page source cited under two spellings of its URL is one entry
            cited = replace(merged[key], count=merged[key].count + cited.count)
        merged[key] = cited
    return sorted(merged.values(), key=lambda c: -c.count)[:TOP_SOURCES]


def _is_multi_page(row: Mapping[str, Any]) -> bool:
    return row["kind"] == SourceKind.WEBSITE and (row["options"] or {}).get("mode", "page") != "page"


def _cited(entry: Mapping[str, Any], row: Mapping[str, Any] | None) -> CitedSource:
    """One entry of the list: a page of a multi-page source, a source, or what a deleted source was cited as."""
    page_url, page_title = entry["page_url"], entry["page_title"]
    if row is None:
        return CitedSource(source_id=entry["source_id"], title=page_title or entry["cited_as"] or "Untitled source",
                           link="", count=entry["count"], deleted=True)
    title = row["title"] or row["url"] or str(row["file"]).rsplit("/", 1)[-1] or entry["cited_as"]
    if page_url and _is_multi_page(row):
        return CitedSource(source_id=row["pk"], title=page_title or page_url, link=_safe_link(page_url),
                           count=entry["count"], page_of=title)
    return CitedSource(source_id=row["pk"], title=title, link=_source_link(row), count=entry["count"])


def guru_analytics(*, guru: Guru, period: int) -> GuruAnalytics:
    """Everything the analytics page shows for the last `period` days, today included (five queries at most)."""
    end = timezone.localdate()
    start = end - timedelta(days=period - 1)
    questions = _period_questions(guru, start)
    return GuruAnalytics(period=period, start=start, end=end, days=_days(questions, start, period),
                         summary=_summary(questions), channels=_channels(questions),
                         top_sources=_top_sources(guru, _period_start(start)))
