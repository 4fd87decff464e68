"""GET /api/v1/<guru>/summary/ and /api/v1/<guru>/data-sources/<id>/summary/: the summary trees' tops."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.answering.links import absolute_link
from backend.api.auth import guru_for
from backend.api.schema import errors
from backend.sources.models import SummaryState
from backend.sources.selectors import source_get
from backend.sources.summary_reads import CoveredSource, SummaryRead, guru_summary_read, source_summary_read

_STATE_HELP = ("Where the summary tree's build stands: " + ", ".join(SummaryState.values)
               + " (OVER_BUDGET: stopped at the token budget), or empty when no build has run.")


class CoveredSourceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    link = serializers.CharField(allow_blank=True, help_text="Empty for a private source; absolute otherwise.")

    class Meta:
        ref_name = "SummarySource"


class SummarySerializer(serializers.Serializer):
    text = serializers.CharField(help_text="Plain text or light markdown; HTML is neutralised.")
    label = serializers.CharField(  # type: ignore[assignment]  # a field, not Field.label: DRF pops declared fields
        help_text='Who wrote it: "Summary by <model>", or that it is an extract.')
    extractive = serializers.BooleanField(
        help_text="Sentences picked from the sources (no language model), not a written summary.")
    model = serializers.CharField(allow_blank=True, help_text="The model that wrote it; empty for an extract.")
    level = serializers.IntegerField(help_text="Its height in the tree (0: a summary of one piece of text).")
    updated_at = serializers.DateTimeField()
    sources = CoveredSourceSerializer(many=True, help_text="The sources it covers.")
    partial = serializers.BooleanField(  # type: ignore[assignment]  # a field, not BaseSerializer.partial
        help_text="The tree stopped before its top (token budget): this is the highest summary reached.")

    class Meta:
        ref_name = "Summary"


class SpendSerializer(serializers.Serializer):
    used = serializers.IntegerField(help_text="Tokens the guru's summaries have spent.")
    budget = serializers.IntegerField(help_text="Tokens they may spend (the guru's own budget or the default).")

    class Meta:
        ref_name = "SummarySpend"


class GuruSummarySerializer(serializers.Serializer):
    guru = serializers.CharField(help_text="The guru's slug.")
    summary = SummarySerializer(allow_null=True, help_text="Null until the guru's summary is written.")
    spend = SpendSerializer()
    state = serializers.CharField(allow_blank=True, help_text=_STATE_HELP)
    note = serializers.CharField(allow_blank=True,
                                 help_text="Why the summary is missing or partial; empty when it is complete.")

    class Meta:
        ref_name = "GuruSummary"


class SourceSummarySerializer(GuruSummarySerializer):
    source_id = serializers.IntegerField()
    summary = SummarySerializer(allow_null=True, help_text="Null until the source's summary is written.")
    done = serializers.IntegerField(help_text="Summaries written in the current build.")
    total = serializers.IntegerField(help_text="Summaries the current build needs; 0 while not known.")

    class Meta:
        ref_name = "SourceSummary"


def _source(request: Request, source: CoveredSource) -> dict[str, Any]:
    return {"id": source.id, "title": source.title, "link": absolute_link(request, source.link) if source.link else ""}


def _body(request: Request, slug: str, read: SummaryRead) -> dict[str, Any]:
    """The response shared by both endpoints; the summary's links absolute, as API clients live elsewhere."""
    view = read.summary
    summary = None if view is None else {
        "text": view.text, "label": view.label, "extractive": view.extractive, "model": view.model,
        "level": view.level, "updated_at": view.updated_at, "sources": [_source(request, s) for s in read.sources],
        "partial": view.partial}
    return {"guru": slug, "summary": summary, "spend": {"used": read.spend.used, "budget": read.spend.budget},
            "state": read.state, "note": read.note}


class GuruSummaryApi(APIView):
    """The guru's summary: the top of the tree its sources' summaries are merged into."""

    @extend_schema(operation_id="guru_summary", summary="Get the guru's summary", tags=["summaries"],
                   description="The guru's summary with the sources it covers, the tokens summaries have spent "
                               "against the budget, and the tree's state. `summary` is null (and `note` says "
                               "why) until it is written.",
                   responses={200: GuruSummarySerializer, **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        return Response(GuruSummarySerializer(_body(request, guru.slug, guru_summary_read(guru))).data)


class SourceSummaryApi(APIView):
    """One data source's summary and its summarising progress."""

    @extend_schema(operation_id="data_sources_summary", summary="Get a data source's summary",
                   tags=["summaries"],
                   description="The source's summary (the top of its own tree), the guru's summary spend and "
                               "the source's summarising progress (`state`, `done` of `total`, `note`). "
                               "`summary` is null until it is written.",
                   responses={200: SourceSummarySerializer, **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str, source_id: int) -> Response:
        guru = guru_for(request, slug)
        source = source_get(guru=guru, source_id=source_id)
        read = source_summary_read(source)
        progress = read.progress
        body = {**_body(request, guru.slug, read), "source_id": source.pk,
                "done": progress.done if progress is not None else 0,
                "total": progress.total if progress is not None else 0}
        return Response(SourceSummarySerializer(body).data)
