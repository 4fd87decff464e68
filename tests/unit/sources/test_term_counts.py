"""A chunk's terms are the reranker's, and document frequencies count chunks, not occurrences."""

from __future__ import annotations

from backend.pipeline.rerank_local import query_terms
from backend.sources.term_stats import MAX_TERM_LENGTH, chunk_terms, document_frequencies


def test_chunk_terms_are_the_reranker_stems_without_stopwords() -> None:
    terms = chunk_terms("Retry settings", "How do retries work with apply_async?")
    assert set(query_terms("retry settings retries apply async work")) <= terms
    assert not terms & {"how", "do", "with", "the"}


def test_overlong_terms_are_dropped() -> None:
    blob = "a" * (MAX_TERM_LENGTH + 1)
    assert chunk_terms("", f"{blob} {'b' * MAX_TERM_LENGTH}") == {"b" * MAX_TERM_LENGTH}


def test_a_term_counts_once_per_chunk_and_titles_count() -> None:
    counts = document_frequencies([("Scheduler", "scheduler scheduler cron"), ("", "cron jobs"), ("", "webhooks")])
    assert counts["scheduler"] == 1 and counts["cron"] == 2 and counts["webhook"] == 1 and counts["graphql"] == 0
