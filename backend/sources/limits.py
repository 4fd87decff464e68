"""The ingestion budget of one source, from the OPENGURU_SOURCE_MAX_* settings and the source's kind."""

from __future__ import annotations

from django.conf import settings

from backend.pipeline.budget import BudgetLimits, IngestBudget
from backend.pipeline.youtube_urls import parse_youtube_url
from backend.sources.models import DataSource, SourceKind


def _noun(source: DataSource) -> str:
    """How messages name the source: "stopped: this PDF holds more than ..."."""
    options = source.options or {}
    if source.kind == SourceKind.PDF:
        return "this PDF"
    if source.kind == SourceKind.GITHUB_REPO:
        return "this repository"
    if source.kind == SourceKind.YOUTUBE:
        try:
            playlist = parse_youtube_url(source.url).kind == "playlist"
        except ValueError:
            playlist = False
        return "this playlist" if playlist else "this video's transcript"
    return "this web page" if options.get("mode", "page") == "page" else "this website"


def source_budget(source: DataSource) -> IngestBudget:
    """A fresh budget for one index run; its clock and memory baseline start now."""
    limits = BudgetLimits(max_chars=settings.OPENGURU_SOURCE_MAX_CHARS, max_chunks=settings.OPENGURU_SOURCE_MAX_CHUNKS,
                          max_seconds=settings.OPENGURU_SOURCE_MAX_SECONDS,
                          max_memory_mb=settings.OPENGURU_SOURCE_MAX_MEMORY_MB)
    return IngestBudget(limits, what=_noun(source))
