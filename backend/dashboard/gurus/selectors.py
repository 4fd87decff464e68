"""Read paths for the gurus list, the deletion summary and the Summary card (a fixed number of queries for any size)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, IntegerField, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from backend.answering.models import AnswerState, Question
from backend.api.models import APIKey
from backend.core.selectors import settings_get
from backend.gurus.examples import InvalidExample, example_text_clean
from backend.gurus.models import Guru
from backend.gurus.selectors import guru_collection_reports, guru_list_for_user
from backend.sources.models import DataSource, SourceStatus
from backend.sources.summary_selectors import SummarySpend, SummaryView, guru_summary, summary_spend
from backend.widget.models import WidgetId


@dataclass(frozen=True)
class GuruRow:
    """One line of the gurus list."""

    guru: Guru
    sources: int
    indexing: int
    failed: int
    chunks: int
    questions: int
    problem: str


def _count(model: type[DataSource] | type[Question], **filters: object) -> Coalesce:
    rows = model.objects.filter(guru=OuterRef("pk"), **filters).order_by().values("guru")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField()), 0)


def guru_overview_rows(*, user: User | AnonymousUser) -> list[GuruRow]:
    """The user's gurus with source, chunk and question counts, and any collection problem."""
    busy = [SourceStatus.PENDING, SourceStatus.PROCESSING]
    chunks = DataSource.objects.filter(guru=OuterRef("pk")).order_by().values("guru")
    gurus = guru_list_for_user(user=user).order_by("name").annotate(
        n_sources=_count(DataSource), n_indexing=_count(DataSource, status__in=busy),
        n_failed=_count(DataSource, status=SourceStatus.FAILED), n_questions=_count(Question),
        n_chunks=Coalesce(Subquery(chunks.annotate(s=Sum("chunk_count")).values("s")[:1],
                                   output_field=IntegerField()), 0),
    )
    reports = {r.guru.pk: r.problem for r in guru_collection_reports(gurus=gurus)}
    return [GuruRow(g, g.n_sources, g.n_indexing, g.n_failed, g.n_chunks, g.n_questions, reports.get(g.pk, ""))
            for g in gurus]


@dataclass(frozen=True)
class DeletionSummary:
    """What deleting a guru removes, shown on the confirmation page."""

    sources: int
    uploaded_files: int
    chunks: int
    questions: int
    api_keys: int
    widget_ids: int
    collection: str


def guru_deletion_summary(*, guru: Guru) -> DeletionSummary:
    stats = DataSource.objects.filter(guru=guru).aggregate(
        n=Count("pk"), files=Count("pk", filter=~Q(file="")), chunks=Coalesce(Sum("chunk_count"), 0)
    )
    reports = guru_collection_reports(gurus=Guru.objects.filter(pk=guru.pk))
    return DeletionSummary(
        sources=stats["n"], uploaded_files=stats["files"], chunks=stats["chunks"],
        questions=Question.objects.filter(guru=guru).count(),
        api_keys=APIKey.objects.filter(guru=guru, revoked_at__isnull=True).count(),
        widget_ids=WidgetId.objects.filter(guru=guru).count(),
        collection=reports[0].record.name if reports and reports[0].record else reports[0].expected_name,
    )


@dataclass(frozen=True)
class AskedQuestion:
    """A question visitors asked, offered to the maintainer to publish as an example (never shown as is)."""

    text: str
    times: int


def example_candidates(*, guru: Guru, published: list[str], limit: int = 8) -> list[AskedQuestion]:
    """Recent distinct first questions that were answered and not voted down, minus those already published."""
    rows = (
        Question.objects.filter(guru=guru, parent__isnull=True, out_of_context=False, intent="question",
                                state=AnswerState.COMPLETE)
        .exclude(content="").exclude(feedback=-1)
        .values("question").annotate(times=Count("pk"), last=Max("created_at")).order_by("-last")[: limit * 2]
    )
    taken = set(published)
    found = [AskedQuestion(row["question"], row["times"]) for row in rows if _as_example(row["question"]) not in taken]
    return found[:limit]


def _as_example(text: str) -> str:
    """The text as it would be published, to recognise a question that already is an example."""
    try:
        return example_text_clean(text)
    except InvalidExample:
        return text


@dataclass(frozen=True)
class SummaryCard:
    """The Overview tab's Summary card: the guru's summary, what it covers, and its token spend."""

    summary: SummaryView | None
    sources: int
    """The guru's sources, of which the summary covers len(summary.sources)."""
    spend: SummarySpend
    default_budget: int

    @property
    def covered(self) -> int:
        return len(self.summary.sources) if self.summary else 0

    @property
    def spend_text(self) -> str:
        return f"{self.spend.used:,} of {self.spend.budget:,} tokens"


def guru_summary_card(*, guru: Guru) -> SummaryCard:
    return SummaryCard(summary=guru_summary(guru_id=guru.pk), sources=DataSource.objects.filter(guru=guru).count(),
                       spend=summary_spend(guru), default_budget=settings_get().summary_token_budget)
