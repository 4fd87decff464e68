"""Relevance feedback: documents near the best-graded passages make the cut; grades stay the question's own."""

from __future__ import annotations

import math
from dataclasses import replace

from backend.pipeline.contexts import ScoredChunk, build_contexts
from backend.pipeline.llm_types import Passage
from backend.pipeline.rerank_local import FusionWeights, LocalFusionReranker
from backend.pipeline.types import SourceKind

QUERY = (1.0, 0.0, 0.0)


def unit(*values: float) -> tuple[float, ...]:
    norm = math.sqrt(sum(v * v for v in values))
    return tuple(v / norm for v in values)


# The answering passage of the question, a passage on the same topic with none of its words nor much of its
# embedding (the page a symptom-phrased question needs), and one on another topic closer to the raw query.
PASSAGES = [
    Passage(text="Flashed messages are shown on the next request.", title="Flashing", vector=unit(0.8, 0.6, 0.0)),
    Passage(text="Templates render get_flashed_messages in a category block.", title="Templates",
            vector=unit(0.2, 0.98, 0.0)),
    Passage(text="Rotating log files by size.", title="Logging", vector=unit(0.3, 0.0, 0.95)),
]
QUESTION = "Why are my flashed messages not shown?"


def test_feedback_chooses_the_neighbour_of_the_best_passage_without_changing_any_grade() -> None:
    plain = LocalFusionReranker(FusionWeights(feedback_passages=0)).rerank(QUESTION, PASSAGES, query_vector=QUERY)
    fed = LocalFusionReranker(FusionWeights(feedback_passages=1)).rerank(QUESTION, PASSAGES, query_vector=QUERY)
    assert [(r.index, r.score) for r in fed] == [(r.index, r.score) for r in plain]  # the grades, untouched
    assert all(r.selection is None for r in plain)
    selection = {r.index: r.selection for r in fed}
    cosine_only = FusionWeights(feedback_passages=1, bm25=0, coverage=0, title=0, heading=0, identifier=0, phrase=0)
    by_cosine = {r.index: r for r in LocalFusionReranker(cosine_only).rerank(QUESTION, PASSAGES, query_vector=QUERY)}
    assert by_cosine[2].score > by_cosine[1].score  # the raw query is closer to the other topic…
    fed_1, fed_2 = by_cosine[1].selection, by_cosine[2].selection
    assert fed_1 is not None and fed_2 is not None
    assert fed_1 > fed_2  # …the query moved toward the best passage is not
    assert all(0.0 <= s <= 1.0 for s in selection.values() if s is not None)


def test_without_a_query_vector_there_is_no_feedback() -> None:
    results = LocalFusionReranker().rerank(QUESTION, [replace(p, vector=None) for p in PASSAGES])
    assert all(r.selection is None for r in results)


def chunk(doc: str, score: float, selection: float | None) -> ScoredChunk:
    return ScoredChunk(chunk_id=doc, source_id=1, generation=1, kind=SourceKind.GITHUB_REPO, text=f"About {doc}.",
                       metadata={"doc_key": doc, "chunk_index": 0, "title": doc}, score=score, selection=selection)


def test_documents_make_the_cut_by_selection_and_are_ordered_by_their_grades() -> None:
    chunks = [chunk("a", 0.9, 0.9), chunk("b", 0.5, 0.3), chunk("c", 0.4, 0.6), chunk("d", 0.45, None)]
    contexts = build_contexts(chunks, max_documents=2, chunks_per_document=2)
    assert [c.title for c in contexts] == ["a", "c"]  # "c" makes the cut on its selection over "b" and "d"
    assert [c.score for c in contexts] == [0.9, 0.4]  # and keeps its own grade for the trust step
    reordered = build_contexts([chunk("a", 0.5, 0.9), chunk("c", 0.8, 0.7), chunk("b", 0.6, 0.1)],
                               max_documents=2, chunks_per_document=2)
    assert [c.title for c in reordered] == ["c", "a"]  # the best-graded passage is still quoted first
