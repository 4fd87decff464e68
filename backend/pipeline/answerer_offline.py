"""The offline answerer: used when no LLM is configured. It extracts, cites and says so; it never
pretends to be a language model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from backend.pipeline.answer_types import (
    AnswerContext,
    AnswerRequest,
    Grade,
    GradeInput,
    Understanding,
    UnderstandRequest,
)
from backend.pipeline.extractive import extractive_summary
from backend.pipeline.llm_types import CancelToken, Completion, Flow, StreamEvent, TextDelta, Usage
from backend.pipeline.ports import Embedder
from backend.pipeline.text import split_sentences, terms
from backend.pipeline.understanding import understand_by_rules

OFFLINE_MODEL = "offline-extractive"
NO_LLM_NOTICE = (
    "*No language model is configured for this OpenGuru, so this is not a generated answer: these are "
    "the passages from the sources that best match your question.*\n\n"
)
MAX_CONTEXTS = 3
SENTENCES_PER_CONTEXT = 3


def _best_sentences(text: str, question_terms: set[str], limit: int) -> list[str]:
    """The sentences sharing most terms with the question, in their original order."""
    sentences = split_sentences(text)
    scored = [(len(question_terms & set(terms(s))), -i, s) for i, s in enumerate(sentences)]
    chosen = sorted(scored, reverse=True)[:limit]
    return [s for _, _, s in sorted(chosen, key=lambda item: -item[1])]


def _excerpt(context: AnswerContext, question_terms: set[str]) -> str:
    sentences = _best_sentences(context.text, question_terms, SENTENCES_PER_CONTEXT)
    quoted = "\n".join(f"> {s}" for s in sentences) or f"> {context.text[:300]}"
    title = context.title or "Source"
    return f"**{title}** [{context.number}]\n{quoted}\n\n"


class OfflineAnswerer:
    """Answerer without an LLM: rules for understanding, reranker scores for trust, extraction.

    With an embedder, summaries are the most central sentences by embedding centrality; without one, the
    sentences whose terms are most frequent.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder

    @property
    def uses_llm(self) -> bool:
        return False

    def understand(self, request: UnderstandRequest) -> tuple[Understanding, Usage | None]:
        return understand_by_rules(request), None

    def grade(self, question: str, contexts: Sequence[GradeInput]) -> tuple[list[Grade], Usage | None]:
        return [Grade(context_id=c.context_id, score=min(1.0, max(0.0, c.prior))) for c in contexts], None

    def answer(self, request: AnswerRequest, *, cancel: CancelToken | None = None) -> Iterator[StreamEvent]:
        question_terms = set(terms(request.question))
        yield TextDelta(NO_LLM_NOTICE)
        for context in request.contexts[:MAX_CONTEXTS]:
            if cancel is not None and cancel.cancelled:
                return
            yield TextDelta(_excerpt(context, question_terms))
        yield Usage(model=OFFLINE_MODEL, flow=Flow.ANSWER)

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> Completion:
        """An extract: whole sentences picked from the texts, in reading order, at most max_chars."""
        usage = Usage(model=OFFLINE_MODEL, flow=Flow.SUMMARIZE)
        if self.embedder is not None:
            embed = self.embedder.embed_documents
            return Completion(text=extractive_summary(texts, max_chars=max_chars, embed=embed), usage=usage)
        return Completion(text=_frequent_sentences(texts, max_chars), usage=usage)


def _frequent_sentences(texts: Sequence[str], max_chars: int) -> str:
    """The sentences whose terms are most frequent across all texts, in reading order."""
    sentences = [s for text in texts for s in split_sentences(text)]
    frequency = Counter(t for s in sentences for t in set(terms(s)))
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: -sum(frequency[t] for t in set(terms(sentences[i]))) / (1 + len(terms(sentences[i]))),
    )
    chosen: list[int] = []
    used = 0
    for i in ranked:
        if used + len(sentences[i]) + 1 > max_chars:
            continue
        chosen.append(i)
        used += len(sentences[i]) + 1
    return " ".join(sentences[i] for i in sorted(chosen))
