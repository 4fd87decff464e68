"""Reciprocal rank fusion and a small BM25 scorer, shared by the vector stores and retrieval (stdlib only)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# 60 is the constant of the RRF paper and of Milvus' RRFRanker default, so fused scores match Milvus'.
RRF_K = 60
BM25_K1 = 1.2
BM25_B = 0.75

# Same tokenizer as Milvus' "standard" analyzer in Lite: runs of word characters, lowercased, so an
# identifier such as CELERY_TASK_ACKS_LATE stays one term.
_WORD = re.compile(r"\w+")

# Function words dropped from BM25 *queries* (documents keep them, so lengths match Milvus' analyzer).
# Their IDF is near zero, so ranking barely changes, but their posting lists hold nearly every chunk:
# Milvus Lite scores postings in Python, and "how do I ..." queries cost it several full scans.
STOP_WORDS = frozenset(
    "a about am an and are as at be been being but by can could did do does doing for from had has have "
    "he her him his how i if in into is it its me my no not of on or our she should so such than that the "
    "their them then there these they this those to was we were what when where which who whom why will "
    "with would you your".split()
)


@dataclass(frozen=True)
class Fused:
    """One item after fusion: its RRF score and its 1-based rank in each input ranking (None if absent)."""

    key: str
    score: float
    ranks: tuple[int | None, ...]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[Fused]:
    """Fuse rankings (each best first) by sum of 1 / (k + rank); best first.

    Ties go to the item ranked better in the earlier ranking, then to the smaller key, so the
    order is deterministic.
    """
    ranks: dict[str, list[int | None]] = {}
    for leg, ranking in enumerate(rankings):
        for position, key in enumerate(ranking, start=1):
            slots = ranks.setdefault(key, [None] * len(rankings))
            if slots[leg] is None:
                slots[leg] = position
    fused = [
        Fused(key=key, score=sum(1.0 / (k + r) for r in slots if r is not None), ranks=tuple(slots))
        for key, slots in ranks.items()
    ]
    fused.sort(key=lambda f: (-f.score, tuple(math.inf if r is None else r for r in f.ranks), f.key))
    return fused


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens."""
    return _WORD.findall(text.lower())


def query_terms(text: str) -> list[str]:
    """The words of a query the BM25 leg searches for: tokens minus STOP_WORDS."""
    return [token for token in tokenize(text) if token not in STOP_WORDS]


def term_counts(text: str) -> Counter[str]:
    """Term frequencies of a text, as the BM25 scorer expects a document."""
    return Counter(tokenize(text))


def bm25_rank(
    query: str, docs: Mapping[str, Mapping[str, int]], *, k1: float = BM25_K1, b: float = BM25_B
) -> list[tuple[str, float]]:
    """Docs (id → term counts) matching at least one query term, best first, with their BM25 scores.

    IDF is Lucene's / Milvus' ln(1 + (N - df + 0.5) / (df + 0.5)), always positive; a query term
    repeated in the query counts once per occurrence, as in Milvus. Stop words in the query are ignored.
    """
    weights = Counter(query_terms(query))
    if not docs or not weights:
        return []
    lengths = {doc_id: sum(counts.values()) for doc_id, counts in docs.items()}
    avgdl = (sum(lengths.values()) / len(docs)) or 1.0
    scores: dict[str, float] = {}
    for term, weight in weights.items():
        holders = [doc_id for doc_id, counts in docs.items() if counts.get(term)]
        if not holders:
            continue
        idf = math.log(1.0 + (len(docs) - len(holders) + 0.5) / (len(holders) + 0.5))
        for doc_id in holders:
            tf = docs[doc_id][term]
            norm = tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * lengths[doc_id] / avgdl))
            scores[doc_id] = scores.get(doc_id, 0.0) + idf * norm * weight
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
