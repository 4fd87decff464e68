"""Local reranker fusing dense cosine, candidate-set BM25 and field matches into a calibrated [0, 1] score."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection, Container, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from backend.pipeline.llm_types import Passage, RerankResult

_WORD = re.compile(r"[A-Za-z0-9]+")
# Splits one alphanumeric run at camelCase / PascalCase / acronym / digit boundaries.
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Something that reads as code: dotted paths, snake_case, camelCase, calls, or `backticked` spans. The \b on the
# dotted and snake_case forms changes no match (failing at a word's start, they fail inside it too) but stops
# their quadratic retries at every letter of every word: 5x faster on prose.
_IDENTIFIER = re.compile(r"`[^`\n]+`|\b\w+(?:\.\w+)+|\b\w*_\w+|\b[a-z]+[A-Z]\w*|\b\w+(?=\()")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$", re.MULTILINE)
# Applied in rounds (plural, then verb ending, then final e) so "settings" and "setting" share a stem.
_PLURALS, _VERB_ENDINGS = (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", "")), (("ied", "y"), ("ing", ""), ("ed", ""))
_SUFFIX_ROUNDS = (_PLURALS, _VERB_ENDINGS, (("e", ""),))
_STOPWORDS = frozenset(
    "a about after again all also an and any are as at be been but by can could do does did each every for from "
    "has have how i if in instead into is it its just many me more most my no not now of on only or other our "
    "over own right same should so some such than that the their them then there these they this to too up us "
    "vs was way we what when where which who whom why will with would you your use using want need "
    "nobody somebody anybody everybody someone anyone everyone something anything everything nothing".split()
)


@dataclass(frozen=True)
class FusionWeights:
    """Logit weights: score = sigmoid(bias + cosine * cos + sum(weight * feature)), each feature in [0, 1].

    Hand-set for all-MiniLM-L6-v2 cosines (unrelated ~0.0-0.2, on-topic ~0.3-0.5, answering ~0.5-0.8) so cosine
    and the lexical features each carry up to ~4-5 logits; the biases were then placed with bench/rerank_quality.py
    so other-topic passages land near 0.05 and most answering ones above 0.6. Lexical features are fractions of the
    query's terms, so a threshold means the same for every query; only BM25's IDF is relative to the candidates,
    hence its modest weight. Without a vector, lexical evidence is scaled by `text_only_gain` around
    `text_only_bias`. `first_stage` (as ranks) is off: its scale depends on the retriever (RRF ~0.016, cosine, BM25).
    """

    bias: float = -3.5
    cosine: float = 5.5
    bm25: float = 1.5
    coverage: float = 2.0
    title: float = 0.8
    heading: float = 0.5
    identifier: float = 0.5
    phrase: float = 1.0
    first_stage: float = 0.0
    text_only_bias: float = -3.0
    text_only_gain: float = 1.6
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    feedback_passages: int = 3
    feedback_weight: float = 0.5


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Strip common English endings so "retries", "retried" and "retry" meet (deliberately not a full stemmer)."""
    for suffixes in _SUFFIX_ROUNDS:
        for suffix, replacement in suffixes:
            stem = word[: -len(suffix)] + replacement
            if word.endswith(suffix) and len(stem) >= 3 and not (suffix == "s" and word.endswith(("ss", "us", "is"))):
                word = stem
                break
    return word


def identifier_parts(text: str) -> list[str]:
    """The words of `text` with identifiers split, as written ("macOS" → "mac", "OS"; "apply_async" → "apply",
    "async")."""
    return _CAMEL_PART.findall(text)


def tokenize(text: str) -> list[str]:
    """Lower-cased, lightly stemmed words; identifiers split so `apply_async`, applyAsync and app.apply match.

    One pass of the camelCase pattern over the whole text equals splitting into alphanumeric runs first (its
    only lookahead reads letters, which never cross a run's edge) and is ~3x faster: this is most of a rerank.
    """
    return [_stem(part.lower()) for part in identifier_parts(text)]


# Stems, not words, so content filtering can run on already-tokenized text ("does" stems to "doe").
_STOP_STEMS = _STOPWORDS | frozenset(_stem(word) for word in _STOPWORDS)


def content_tokens(tokens: Sequence[str]) -> list[str]:
    return [token for token in tokens if token not in _STOP_STEMS]


def query_terms(query: str) -> list[str]:
    """Distinct content terms of the query in order (stopwords dropped; all kept if nothing else is left).

    Single letters go (the "s" of "it's", the "a" of "plan a"), but numbers stay whatever their length: in
    "what does exit code 2 mean?" the "2" is what tells the answering passage from its neighbours.
    """
    tokens = tokenize(query)
    kept = [token for token in content_tokens(tokens) if len(token) > 1 or token.isdigit()]
    return list(dict.fromkeys(kept or tokens))


def _fraction(terms: Collection[Hashable], field: Container[Hashable]) -> float:
    return sum(term in field for term in terms) / len(terms) if terms else 0.0


def _weighted_fraction(weights: Mapping[str, float], field: Container[str]) -> float:
    """Share of the query's term weight the field holds (IDF weights are never 0, so only no terms gives 0)."""
    total = sum(weights.values())
    return sum(weight for term, weight in weights.items() if term in field) / total if total else 0.0


def _bigram_fraction(terms: Sequence[str], tokens: Sequence[str]) -> float:
    """Share of adjacent query-term pairs that also appear adjacent in the passage (phrase / proximity match)."""
    if len(terms) < 2:
        return 0.0
    present = set(zip(tokens, tokens[1:], strict=False))
    return _fraction(list(zip(terms, terms[1:], strict=False)), present)


def candidate_idf(terms: Sequence[str], documents: Sequence[Container[str]]) -> dict[str, float]:
    """BM25's inverse document frequency of each term over the candidates (never negative)."""
    return {t: math.log(1 + (len(documents) - (n := sum(t in d for d in documents)) + 0.5) / (n + 0.5)) for t in terms}


def bm25_scores(idf: Mapping[str, float], documents: Sequence[Sequence[str]], *, k1: float,
                b: float) -> list[float]:
    """BM25 of the terms of `idf` (see candidate_idf), average length taken over the candidates, divided by its
    ceiling so it lies in [0, 1)."""
    if not idf or not documents:
        return [0.0] * len(documents)
    counts = [Counter(document) for document in documents]
    average_length = max(sum(len(document) for document in documents) / len(documents), 1.0)
    ceiling = sum(idf.values()) * (k1 + 1)
    scores = []
    for count, document in zip(counts, documents, strict=True):
        norm = k1 * (1 - b + b * len(document) / average_length)
        scores.append(sum(w * count[t] * (k1 + 1) / (count[t] + norm) for t, w in idf.items() if count[t]) / ceiling)
    return scores


def cosine_scores(query_vector: Sequence[float], passages: Sequence[Passage]) -> list[float | None]:
    """Cosine of the query to each stored vector; None where a passage has no vector."""
    query = np.asarray(query_vector, dtype=np.float64)
    query = query / (float(np.linalg.norm(query)) or 1.0)
    scores: list[float | None] = []
    for passage in passages:
        vector = None if passage.vector is None else np.asarray(passage.vector, dtype=np.float64)
        if vector is not None and vector.shape != query.shape:
            raise ValueError(f"query vector has {query.size} dimensions but a passage vector has {vector.size}")
        scores.append(None if vector is None else float(vector @ query) / (float(np.linalg.norm(vector)) or 1.0))
    return scores


def _lexical_logit(
    terms: Mapping[str, float], phrase_terms: Sequence[str], passage: Passage, fields: tuple[list[str], list[str]],
    weights: FusionWeights,
) -> float:
    """Coverage, title, heading, identifier and phrase contributions for one passage (BM25 is added by the caller).

    Coverage weighs each query term by its rarity among the candidates: a long, symptom-phrased question is
    mostly words every candidate shares ("page", "shows", "error"), and counting them equally rewarded the
    passages that repeat them over the one holding the question's few telling words (recall@5 on the shipped
    benchmark 0.90 -> 0.94, held-out questions included). The other fields stay plain fractions: they hold few
    words, and weighting them measured no different.
    """
    title, text = content_tokens(fields[0]), content_tokens(fields[1])
    headings = set(tokenize(" ".join(_HEADING.findall(passage.text))))
    identifiers = set(tokenize(" ".join(_IDENTIFIER.findall(passage.text))))
    return (
        weights.coverage * _weighted_fraction(terms, {*title, *text})
        + weights.title * _fraction(terms, set(title))
        + weights.heading * _fraction(terms, headings)
        + weights.identifier * _fraction(terms, identifiers)
        + weights.phrase * _bigram_fraction(phrase_terms, [*title, *text])
    )


def _first_stage_ranks(passages: Sequence[Passage]) -> list[float]:
    """First-stage scores as ranks mapped to [0, 1] (best 1.0), so any retriever's scale works; 0 when absent."""
    scored = sorted((i for i, p in enumerate(passages) if p.first_stage_score is not None),
                    key=lambda i: -(passages[i].first_stage_score or 0.0))
    ranks = [0.0] * len(passages)
    for rank, index in enumerate(scored):
        ranks[index] = 1.0 - rank / len(scored)
    return ranks


def _sigmoid(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1.0 + math.exp(logit))


class LocalFusionReranker:
    """Feature-fusion reranker over what is known at query time; never embeds anything (it has no embedder)."""

    def __init__(self, weights: FusionWeights | None = None) -> None:
        self._weights = weights or FusionWeights()

    @property
    def name(self) -> str:
        return "local-fusion"

    def rerank(
        self,
        query: str,
        passages: Sequence[Passage],
        *,
        query_vector: Sequence[float] | None = None,
        top_k: int | None = None,
    ) -> list[RerankResult]:
        if not passages or (top_k is not None and top_k <= 0):
            return []
        w = self._weights
        terms = query_terms(query)
        phrase_terms = content_tokens(tokenize(query))
        fields = [(tokenize(p.title), tokenize(p.text)) for p in passages]
        documents = [title + text for title, text in fields]
        rarity = candidate_idf(terms, [set(document) for document in documents])
        bm25 = bm25_scores(rarity, documents, k1=w.bm25_k1, b=w.bm25_b)
        cosines = cosine_scores(query_vector, passages) if query_vector is not None else [None] * len(passages)
        first_stage = _first_stage_ranks(passages) if w.first_stage else [0.0] * len(passages)
        lexical = [w.bm25 * bm25[i] + _lexical_logit(rarity, phrase_terms, passage, fields[i], w)
                   for i, passage in enumerate(passages)]
        grades = self._logits(cosines, lexical, first_stage)
        moved = _feedback_cosines(query_vector, passages, grades, w) if query_vector is not None else None
        selection = None if moved is None else self._logits(moved, lexical, first_stage)
        results = [RerankResult(index=i, score=_sigmoid(logit),
                                selection=None if selection is None else _sigmoid(selection[i]))
                   for i, logit in enumerate(grades)]
        results.sort(key=lambda result: (-result.score, result.index))
        return results if top_k is None else results[:top_k]

    def _logits(self, cosines: Sequence[float | None], lexical: Sequence[float],
                first_stage: Sequence[float]) -> list[float]:
        w = self._weights
        return [(w.text_only_bias + w.text_only_gain * lx if cosine is None else w.bias + w.cosine * cosine + lx)
                + w.first_stage * rank for cosine, lx, rank in zip(cosines, lexical, first_stage, strict=True)]


def _feedback_cosines(query_vector: Sequence[float], passages: Sequence[Passage], logits: Sequence[float],
                      weights: FusionWeights) -> list[float | None] | None:
    """Cosines to the query moved toward its best-graded passages (Rocchio pseudo-relevance feedback).

    A question phrased as a symptom shares few words and little of its embedding with the page that answers
    it; the passages it does grade best usually sit in that page's neighbourhood, so the query moved toward
    them finds the page among the candidates (recall@5 of pages on the shipped benchmark 0.947 -> 0.973, no
    question lost). Moving the query also raises every grade toward the topic, near misses included, so these
    cosines choose documents only (RerankResult.selection); the grades stay the question's own. None when
    there is nothing to move toward (feedback off, or no vectors among the best).
    """
    best = sorted(range(len(passages)), key=lambda i: -logits[i])[: weights.feedback_passages]
    vectors = [np.asarray(passages[i].vector, dtype=np.float64) for i in best if passages[i].vector is not None]
    if not vectors:
        return None
    query = np.asarray(query_vector, dtype=np.float64)
    query = query / (float(np.linalg.norm(query)) or 1.0)
    centroid = np.mean([v / (float(np.linalg.norm(v)) or 1.0) for v in vectors], axis=0)
    return cosine_scores((query + weights.feedback_weight * centroid).tolist(), passages)
