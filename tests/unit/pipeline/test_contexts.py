"""Contexts: only live chunks, best sources first, neighbours merged without repeating overlap, trust."""

from __future__ import annotations

import pytest

from backend.pipeline.contexts import PASSAGE_BREAK, ScoredChunk, build_contexts, live_only, locator_text
from backend.pipeline.types import SourceKind


def chunk(source: int, index: int, text: str, score: float, *, generation: int = 1, doc: str = "d",
          **meta: object) -> ScoredChunk:
    return ScoredChunk(chunk_id=f"{source}-{doc}-{index}", source_id=source, generation=generation,
                       kind=SourceKind.WEBSITE, text=text, score=score,
                       metadata={"doc_key": doc, "chunk_index": index, "title": f"T{source}", "link": f"L{source}",
                                 **meta})


def test_only_the_published_generation_is_read() -> None:
    chunks = [chunk(1, 0, "a", 0.9, generation=1), chunk(1, 0, "b", 0.8, generation=2), chunk(2, 0, "c", 0.7)]
    assert [c.text for c in live_only(chunks, {1: 1})] == ["a"]


def test_neighbours_merge_and_overlap_is_not_repeated() -> None:
    left = "Workers take tasks from the broker. They acknowledge each task only after it finished."
    right = "They acknowledge each task only after it finished. Late acknowledgement survives crashes."
    merged = build_contexts([chunk(1, 4, left, 0.7), chunk(1, 5, right, 0.9)], max_documents=5, chunks_per_document=3)
    assert len(merged) == 1
    assert merged[0].text.count("They acknowledge each task") == 1
    assert merged[0].text.endswith("survives crashes.") and merged[0].score == 0.9
    assert merged[0].chunk_ids == ("1-d-4", "1-d-5")


def test_best_sources_first_and_limits() -> None:
    chunks = [chunk(s, i, f"s{s}c{i}", 1.0 - s * 0.1 - i * 0.01) for s in range(1, 8) for i in (0, 2, 4, 6)]
    contexts = build_contexts(chunks, max_documents=3, chunks_per_document=2)
    assert {c.source_id for c in contexts} == {1, 2, 3}
    # One context per page: its two best passages, in reading order, with the gap between them marked.
    assert len(contexts) == 3 and contexts[0].text == f"s1c0{PASSAGE_BREAK}s1c2"
    assert [c.score for c in contexts] == sorted((c.score for c in contexts), reverse=True)


def test_chunks_of_different_documents_never_merge() -> None:
    contexts = build_contexts([chunk(1, 0, "x" * 30, 0.5, doc="a"), chunk(1, 1, "y" * 30, 0.4, doc="b")],
                              max_documents=2, chunks_per_document=5)
    assert len(contexts) == 2


@pytest.mark.parametrize(("meta", "expected"), [
    ({"page": 3}, "page 3"), ({"seconds": 754}, "12:34"), ({"seconds": 3725}, "1:02:05"),
    ({"line_start": 10, "line_end": 42}, "lines 10–42"), ({}, ""),
])
def test_locators(meta: dict[str, object], expected: str) -> None:
    assert locator_text(SourceKind.PDF, meta) == expected


def test_pages_of_one_source_each_take_a_slot() -> None:
    # One source holding a whole site: the answer's second page is a document of its own, not cut by a
    # per-source cap.
    chunks = [chunk(1, 0, f"page {doc} text", 0.9 - n * 0.1, doc=doc) for n, doc in enumerate("abcdef")]
    contexts = build_contexts(chunks, max_documents=5, chunks_per_document=3)
    assert [c.text for c in contexts] == ["page a text", "page b text", "page c text", "page d text", "page e text"]
    assert len({c.document for c in contexts}) == 5
