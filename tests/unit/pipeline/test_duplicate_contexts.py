"""The same content from two sources is one context (naming the other source), before sources are capped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.pipeline.contexts import SourceMention, build_contexts
from backend.pipeline.text import near_identical
from tests.unit.pipeline.test_contexts import chunk

PAGE = ("Install the package with pip. Then run openguru start to launch the web server, the worker and the "
        "embedded vector store. The first start downloads the embedding model.")
OTHER = "Backups are taken with openguru backup, which writes one archive holding the database and the files."


def test_a_page_indexed_alone_and_via_a_sitemap_is_one_context_that_names_both() -> None:
    chunks = [chunk(1, 0, PAGE, 0.8, doc="page"), chunk(2, 0, "  " + PAGE.replace(" ", "\n", 3), 0.8, doc="sm-a"),
              chunk(2, 3, OTHER, 0.6, doc="sm-b")]
    contexts = build_contexts(chunks, max_documents=5, chunks_per_document=3)
    assert [c.text for c in contexts] == [PAGE, OTHER]
    assert contexts[0].source_id == 1 and contexts[0].also_in == (SourceMention(2, "T2", "L2"),)
    assert contexts[1].source_id == 2 and contexts[1].also_in == ()


def test_near_identical_text_collapses_and_different_text_does_not() -> None:
    assert near_identical(PAGE, PAGE + " Updated 2026.")
    assert not near_identical(PAGE, OTHER)
    assert not near_identical("Run openguru start.", "Run openguru stop.")


def test_a_duplicate_does_not_take_a_source_slot() -> None:
    chunks = [chunk(1, 0, PAGE, 0.9), chunk(2, 0, PAGE, 0.85), chunk(3, 0, OTHER, 0.5)]
    contexts = build_contexts(chunks, max_documents=2, chunks_per_document=3)
    assert [c.source_id for c in contexts] == [1, 3]


def test_the_best_copy_is_kept_and_a_third_copy_is_named_once() -> None:
    chunks = [chunk(4, 0, PAGE, 0.6), chunk(2, 0, PAGE, 0.9), chunk(3, 0, PAGE, 0.7), chunk(3, 5, PAGE, 0.65, doc="e")]
    (context,) = build_contexts(chunks, max_documents=5, chunks_per_document=3)
    assert context.source_id == 2 and context.score == 0.9
    assert [m.source_id for m in context.also_in] == [3, 4]


WORDS = st.sampled_from(["retry", "broker", "task", "worker", "beat", "queue", "redis", "celery", "ack"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.lists(WORDS, min_size=1, max_size=12).map(" ".join),
                          st.floats(0, 1)), max_size=12))
def test_contexts_are_pairwise_distinct_and_every_source_is_accounted_for(rows: list[tuple[int, str, float]]) -> None:
    chunks = [chunk(source, 2 * i, text, score, doc=f"d{source}") for i, (source, text, score) in enumerate(rows)]
    contexts = build_contexts(chunks, max_documents=5, chunks_per_document=3)
    for i, left in enumerate(contexts):
        assert all(not near_identical(left.text, right.text) for right in contexts[i + 1:])
        assert left.source_id not in {m.source_id for m in left.also_in}
    named = {c.source_id for c in contexts} | {m.source_id for c in contexts for m in c.also_in}
    assert named == {source for source, _, _ in rows}
    assert [c.score for c in contexts] == sorted((c.score for c in contexts), reverse=True)
