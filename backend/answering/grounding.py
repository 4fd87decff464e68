"""The trust step: grade the retrieved contexts, score how well they support an answer, keep what does."""

from __future__ import annotations

from dataclasses import dataclass

from backend.pipeline.answer_types import GradeInput
from backend.pipeline.contexts import Context, TrustDecision, select_trusted
from backend.pipeline.llm_types import Usage
from backend.pipeline.ports import Answerer
from backend.retrieval.services import Retrieval


@dataclass(frozen=True)
class Grounding:
    """The retrieved contexts (best first), their grades, and the trust decision over them."""

    retrieval: Retrieval
    scores: tuple[float, ...]
    decision: TrustDecision

    @property
    def kept(self) -> list[Context]:
        return [self.retrieval.contexts[i] for i in self.decision.kept]


def grades(answerer: Answerer, question: str, contexts: list[Context]) -> tuple[list[float], Usage | None]:
    """Each context's grade (the reranker's score where the answerer gives none)."""
    if not contexts:
        return [], None
    inputs = [GradeInput(context_id=i, text=c.text, prior=c.score) for i, c in enumerate(contexts)]
    graded, usage = answerer.grade(question, inputs)
    by_id = {g.context_id: g.score for g in graded}
    return [by_id.get(i, c.score) for i, c in enumerate(contexts)], usage


def ground(answerer: Answerer, question: str, retrieval: Retrieval, *,
           threshold: float) -> tuple[Grounding, Usage | None]:
    """Grade and decide: which contexts an answer may rest on, and its trust score."""
    scores, usage = grades(answerer, question, retrieval.contexts)
    decision = select_trusted(scores, threshold=threshold)
    return Grounding(retrieval, tuple(scores), decision), usage
