"""Document frequencies of each source's terms over its live chunks, so answering can tell a guru's rare words."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Sum

from backend.adapters import registry
from backend.core.tasks import enqueue_on_commit
from backend.pipeline.support import text_terms
from backend.pipeline.text import typo_of
from backend.pipeline.types import SUMMARY_GENERATION
from backend.sources.models import DataSource, SourceTerm, SourceTermStats
from backend.sources.selectors import term_counts_current
from backend.sources.summaries import collection_name

logger = logging.getLogger(__name__)
MAX_TERM_LENGTH = 64
"""Longer terms are dropped: a base64 blob or a minified line is no word anyone asks about (and fits no row)."""
MAX_QUERY_TERMS = 64
"""Terms looked up per question: a question's content words, bounded whatever the caller passes."""
MAX_SOURCE_CHUNKS = 20_000
"""Chunks read back per refresh. The port reads no further pages, so a larger source is counted over the first
20,000 it returns (unordered), and `chunks` says how many: rarity (df / chunks) holds on that sample, absence is
less certain. One index run writes at most OPENGURU_SOURCE_MAX_CHUNKS (20,000 by default), so only a repository
grown by many syncs, or a raised bound, gets there."""
INSERT_BATCH = 1000
MAX_SPELLING_CANDIDATES = 5000
"""Terms read per word checked for a typo (those sharing its first two letters)."""


@dataclass(frozen=True)
class TermFrequencies:
    """Over a guru's live sources that have counts: their chunks, and how many of them hold each asked term."""

    chunks: int
    df: dict[str, int]
    complete: bool
    """Every live source of the guru has counts for its current index (else some chunks are not counted)."""


def chunk_terms(title: str, text: str) -> set[str]:
    """A chunk's distinct terms, as the reranker tokenises a passage (stemmed, stopwords dropped), and its
    mixed-case words whole, so a name is counted as written ("GraphQL", not only "graph" and "ql")."""
    return {term for term in text_terms(f"{title}\n{text}") if len(term) <= MAX_TERM_LENGTH}


def document_frequencies(chunks: Iterable[tuple[str, str]]) -> Counter[str]:
    """For (title, text) chunks: in how many of them each term occurs."""
    counts: Counter[str] = Counter()
    for title, text in chunks:
        counts.update(chunk_terms(title, text))
    return counts


def term_stats_queue(*, source_id: int) -> None:
    """After commit, recount the source's terms (always on: it embeds nothing and calls no model)."""
    enqueue_on_commit("sources.term_stats", source_id=source_id)


def term_stats_refresh(*, source_id: int) -> bool:
    """Recount the source's terms over its live chunks and replace its rows; returns whether it wrote them.

    Idempotent. A source deleted, no longer live, or re-indexed while its chunks were read is left alone: the
    newer run queues its own refresh.
    """
    source = DataSource.objects.filter(pk=source_id, indexed_generation__isnull=False).first()
    collection = collection_name(source.guru_id) if source is not None else None
    if source is None or source.indexed_generation is None or collection is None:
        return False
    generation = source.indexed_generation
    hits = registry.vector_store().source_chunks(collection, source_id=source_id, generation=generation,
                                                 limit=MAX_SOURCE_CHUNKS)
    # The read is of one index generation, so no summary row should come back; should one, it is no chunk.
    chunks = [(str(hit.metadata.get("title", "")), hit.text) for hit in hits if hit.generation != SUMMARY_GENERATION]
    if len(hits) >= MAX_SOURCE_CHUNKS:
        logger.warning("source %s: terms counted over the first %d chunks only", source_id, MAX_SOURCE_CHUNKS)
    return _replace(source, generation=generation, chunks=len(chunks), frequencies=document_frequencies(chunks))


def _replace(source: DataSource, *, generation: int, chunks: int, frequencies: Counter[str]) -> bool:
    with transaction.atomic():
        # The row lock (PostgreSQL) puts two refreshes of one source one after the other, and the filter drops
        # counts of an index replaced while they were made.
        unchanged = DataSource.objects.select_for_update().filter(
            pk=source.pk, indexed_generation=generation, last_indexed_at=source.last_indexed_at,
        ).order_by().values_list("pk", flat=True).first()
        if unchanged is None:
            logger.info("source %s changed while its terms were counted; left to the newer run", source.pk)
            return False
        SourceTerm.objects.filter(source_id=source.pk).delete()
        SourceTerm.objects.bulk_create(
            [SourceTerm(source_id=source.pk, term=term, df=df) for term, df in frequencies.items()],
            batch_size=INSERT_BATCH)
        SourceTermStats.objects.update_or_create(source_id=source.pk, defaults={
            "chunks": chunks, "generation": generation, "indexed_at": source.last_indexed_at})
    return True


def term_stats_recover() -> int:
    """Queue a recount for every live source without current counts (also the backfill of sources indexed
    before counts existed). Returns how many were queued."""
    rows = DataSource.objects.filter(indexed_generation__isnull=False).values_list(
        "pk", "indexed_generation", "last_indexed_at", "term_stats__generation", "term_stats__indexed_at")
    stale = [row[0] for row in rows if not term_counts_current(*row[1:])]
    for source_id in stale:
        term_stats_queue(source_id=source_id)
    return len(stale)


def term_frequencies(guru_id: int, terms: Sequence[str]) -> TermFrequencies:
    """Document frequencies of already tokenised `terms` (see rerank_local.query_terms) over the guru's live
    sources that have counts; a term no counted chunk holds has 0. Two queries at most."""
    df = dict.fromkeys(terms[:MAX_QUERY_TERMS], 0)
    wanted = [term for term in df if 0 < len(term) <= MAX_TERM_LENGTH]  # longer ones are never counted
    rows = list(DataSource.objects.filter(guru_id=guru_id, indexed_generation__isnull=False).order_by().values_list(
        "pk", "indexed_generation", "last_indexed_at", "term_stats__generation", "term_stats__indexed_at",
        "term_stats__chunks"))
    # Stale counts still count: a source's words missing for the minute of a recount would read as absent.
    counted = [row[0] for row in rows if row[5] is not None]
    if counted and wanted:
        found = (SourceTerm.objects.filter(source_id__in=counted, term__in=wanted).order_by()
                 .values("term").annotate(total=Sum("df")).values_list("term", "total"))
        df.update({term: int(total) for term, total in found})
    return TermFrequencies(chunks=sum(row[5] or 0 for row in rows), df=df,
                           complete=all(term_counts_current(*row[1:5]) for row in rows))


def misspelt_terms(guru_id: int, terms: Sequence[str]) -> set[str]:
    """Of `terms` (words the guru's counts lack), those one typo (two, from eight letters) from a term it holds:
    "blueprnt" is "blueprint" misspelt, not a thing the guru never mentions ("systemd" is not "system" misspelt:
    see typo_of). A typo in the first two letters is not looked for (one bounded read per word)."""
    found = set()
    for term in terms[:MAX_QUERY_TERMS]:
        if len(term) < 4:
            continue
        known = (SourceTerm.objects.filter(source__guru_id=guru_id, source__indexed_generation__isnull=False,
                                           term__startswith=term[:2])
                 .order_by().values_list("term", flat=True).distinct()[:MAX_SPELLING_CANDIDATES])
        limit = 2 if len(term) >= 8 else 1
        if any(typo_of(term, other, limit) for other in known):
            found.add(term)
    return found
