"""The trust step: grade the retrieved contexts, score how well they support an answer, keep what does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from backend.adapters.embeddings.local_minilm import general_vocabulary
from backend.adapters.words.english import common_words, english_words
from backend.answering.variants import name_variants
from backend.pipeline.answer_types import GradeInput
from backend.pipeline.contexts import Context
from backend.pipeline.llm_types import Usage
from backend.pipeline.ports import Answerer
from backend.pipeline.rerank_local import query_terms
from backend.pipeline.support import Support, Vocabulary, absent_names, coined_words, name_terms, support
from backend.pipeline.types import SourceKind
from backend.retrieval.services import Retrieval
from backend.sources.term_stats import misspelt_terms, term_frequencies


@dataclass(frozen=True)
class Grounding:
    """The retrieved contexts (best first), their grades, and the trust decision over them."""

    retrieval: Retrieval
    scores: tuple[float, ...]
    decision: Support

    @property
    def kept(self) -> list[Context]:
        return [self.retrieval.contexts[i] for i in self.decision.kept]

    @property
    def signals(self) -> Mapping[str, float]:
        return self.decision.signals


def grades(answerer: Answerer, question: str, contexts: list[Context]) -> tuple[list[float], Usage | None]:
    """Each context's grade (the reranker's score where the answerer gives none)."""
    if not contexts:
        return [], None
    inputs = [GradeInput(context_id=i, text=c.text, prior=c.score) for i, c in enumerate(contexts)]
    graded, usage = answerer.grade(question, inputs)
    by_id = {g.context_id: g.score for g in graded}
    return [by_id.get(i, c.score) for i, c in enumerate(contexts)], usage


def vocabulary_for(guru_id: int, query: str) -> Vocabulary:
    """How often the guru's live chunks hold each of the query's terms, and which of its coined words the guru
    lacks only as a misspelling."""
    coined = coined_words(query, general_vocabulary(), english_words(), common_words())
    counts = term_frequencies(guru_id, list(dict.fromkeys([*query_terms(query), *name_terms(query), *coined])))
    misspelt = misspelt_terms(guru_id, [term for term in coined if not counts.df.get(term)]) if counts.complete \
        else set()
    return Vocabulary(chunks=counts.chunks, df=counts.df, complete=counts.complete, coined=tuple(coined),
                      misspelt=frozenset(misspelt))


def ground(answerer: Answerer, question: str, retrieval: Retrieval, *, guru_id: int, query: str,
           threshold: float) -> tuple[Grounding, Usage | None]:
    """Grade and decide: which contexts an answer may rest on, and its trust score.

    `question` is what the grader reads; `query` (the standalone search text) is what the evidence must be about.
    """
    scores, usage = grades(answerer, question, retrieval.contexts)
    vocabulary = vocabulary_for(guru_id, query) if retrieval.contexts else None
    texts = [f"{c.title}\n{c.text}" for c in retrieval.contexts]
    absent = absent_names(query, vocabulary)
    if vocabulary is not None and absent:
        vocabulary = replace(vocabulary, variants=name_variants(query, absent, texts))
    notes = [i for i, c in enumerate(retrieval.contexts) if c.kind is SourceKind.MEMORY]
    decision = support(query, texts, scores, threshold=threshold, vocabulary=vocabulary, subject=retrieval.subject,
                       links=retrieval.links, notes=notes)
    return Grounding(retrieval, tuple(scores), decision), usage
