"""Offline extracts: central whole sentences in reading order, never headings, repeats or cut sentences."""

from __future__ import annotations

import pytest

from backend.adapters import registry
from backend.adapters.embeddings.fake import HashingEmbedder
from backend.pipeline.answerer_offline import OFFLINE_MODEL, OfflineAnswerer
from backend.pipeline.extractive import MAX_SENTENCES, RUN_CHARS, candidate_sentences, extractive_summary
from backend.pipeline.llm_types import Flow

EMBEDDER = HashingEmbedder()
CELERY = """# Celery

## Overview

Celery is a distributed task queue that runs Celery tasks in worker processes.
Celery workers take tasks from a message broker such as Redis or RabbitMQ.
The cafeteria opens at nine and lunch is served until two.
- Celery tasks can be retried with self.retry() when a worker fails.

```python
app = Celery("tasks", broker="redis://localhost")
app.conf.task_acks_late = True
```

| Option | Default |
|--------|---------|
Celery Beat schedules periodic tasks for the Celery workers.
See also.
"""
SENTENCES = (
    "Celery is a distributed task queue that runs Celery tasks in worker processes.",
    "Celery workers take tasks from a message broker such as Redis or RabbitMQ.",
    "The cafeteria opens at nine and lunch is served until two.",
    "Celery tasks can be retried with self.retry() when a worker fails.",
    "Celery Beat schedules periodic tasks for the Celery workers.",
)


def _summary(texts: list[str], max_chars: int) -> str:
    return extractive_summary(texts, max_chars=max_chars, embed=EMBEDDER.embed_documents)


def _picked(summary: str) -> list[str]:
    """The summary's sentences, which must each be one of SENTENCES (whole, never cut)."""
    found = [s for s in SENTENCES if s in summary]
    rest = summary
    for sentence in found:
        rest = rest.replace(sentence, "", 1)
    assert not rest.strip(), f"not a whole sentence: {rest!r}"
    return found


@pytest.mark.parametrize("max_chars", [80, 160, 250, 400, 2000])
def test_the_extract_fits_and_is_made_of_whole_sentences_in_reading_order(max_chars: int) -> None:
    summary = _summary([CELERY], max_chars)
    assert 0 < len(summary) <= max_chars
    picked = _picked(summary)
    assert picked == sorted(picked, key=SENTENCES.index)


def test_headings_code_tables_and_fragments_are_never_picked() -> None:
    summary = _summary([CELERY], 5000)
    for unwanted in ("# ", "Overview", "app.conf", "Option", "|", "See also", "- "):
        assert unwanted not in summary
    assert set(_picked(summary)) == set(SENTENCES)


def test_the_most_central_sentences_win_and_the_off_topic_one_loses() -> None:
    summary = _summary([CELERY], 250)
    assert "cafeteria" not in summary
    assert "Celery" in summary


def test_repeats_and_near_repeats_are_picked_once() -> None:
    text = ("Celery workers take tasks from a message broker such as Redis or RabbitMQ. "
            "Celery workers take tasks from a message broker such as Redis or RabbitMQ. "
            "Celery workers take tasks from the message broker such as Redis or RabbitMQ. "
            "Celery Beat schedules periodic tasks for the Celery workers.")
    summary = _summary([text, text], 1000)
    assert summary.count("workers take tasks") == 1
    assert "Celery Beat" in summary


def test_texts_keep_their_order_and_are_separated_by_a_blank_line() -> None:
    first = "Celery workers run Celery tasks in separate worker processes."
    second = "Celery tasks are sent to Celery workers through the broker."
    assert _summary([first, second], 1000) == f"{first}\n\n{second}"


def test_hard_wrapped_sentences_are_read_whole_and_a_title_line_is_not_glued_on() -> None:
    text = ("Installation Guide\nCelery workers are started from the command line\nwith the celery worker "
            "command. Celery workers read\ntheir settings from the app configuration.\n\n- Each worker runs "
            "many tasks\n  at the same time.")
    summary = _summary([text], 1000)
    assert summary == ("Celery workers are started from the command line with the celery worker command. "
                       "Celery workers read their settings from the app configuration. "
                       "Each worker runs many tasks at the same time.")


def test_same_input_same_extract() -> None:
    assert _summary([CELERY] * 3, 300) == _summary([CELERY] * 3, 300)


def test_nothing_qualifies_or_fits_gives_an_empty_extract() -> None:
    assert _summary([], 500) == ""
    assert _summary(["# Title", "Short line.", "```\ncode here is not prose at all\n```"], 500) == ""
    assert _summary([SENTENCES[0]], 20) == ""


def test_one_batch_of_at_most_max_sentences_is_embedded() -> None:
    calls: list[int] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(len(texts))
        return EMBEDDER.embed_documents(texts)

    text = " ".join(f"Celery worker number {i} processes queued task batch {i * 7}." for i in range(1000))
    summary = extractive_summary([text], max_chars=600, embed=embed)
    assert calls == [MAX_SENTENCES]
    assert 0 < len(summary) <= 600


def test_unpunctuated_captions_are_read_in_runs_of_whole_words() -> None:
    embedded: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return EMBEDDER.embed_documents(texts)

    captions = " ".join(f"so in part {i} we look at how celery worker {i} picks up tasks from the broker"
                        for i in range(40))
    summary = extractive_summary([captions], max_chars=1000, embed=embed)
    assert 0 < len(summary) <= 1000
    assert embedded and all(len(run) <= RUN_CHARS and run in captions for run in embedded)
    assert set(summary.split()) <= set(captions.split())  # no word cut in two


def test_the_offline_answerer_extracts_by_centrality_when_it_has_an_embedder() -> None:
    completion = OfflineAnswerer(embedder=EMBEDDER).summarize([CELERY], max_chars=250)
    assert completion.text == _summary([CELERY], 250)
    assert completion.usage.model == OFFLINE_MODEL and completion.usage.flow is Flow.SUMMARIZE


def test_the_offline_answerer_without_an_embedder_picks_frequent_terms() -> None:
    completion = OfflineAnswerer().summarize([" ".join(SENTENCES)], max_chars=150)
    assert 0 < len(completion.text) <= 150
    assert completion.usage.model == OFFLINE_MODEL


@pytest.mark.django_db  # the saved chat provider is read: none, so offline
def test_the_registry_gives_the_offline_answerer_the_configured_embedder() -> None:
    answerer = registry.answerer()
    assert isinstance(answerer, OfflineAnswerer)
    assert answerer.embedder is registry.embedder()


def test_a_pdf_heading_line_is_not_glued_to_the_sentence_below() -> None:
    page = ("# deploy.pdf — page 1\n\nDeploying TaskQ workers\n"
            "Run one worker process per CPU core with taskq worker --concurrency 4.\n"
            "Set TASKQ_BROKER_URL to the Redis address before starting workers.")
    text = extractive_summary([page], max_chars=400, embed=HashingEmbedder().embed_documents)
    assert text.startswith("Run one worker process") and "deploy.pdf" not in text and "Deploying" not in text


def test_a_sentence_announcing_what_follows_is_never_a_summary_sentence() -> None:
    texts = ["Legacy assertion mode uses the equality operator in the following cases:\n\n"
             "Deep equality compares the enumerable own properties of child objects recursively."]
    picked = [s.text for s in candidate_sentences(texts)]
    assert picked == ["Deep equality compares the enumerable own properties of child objects recursively."], picked
