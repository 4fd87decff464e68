"""Small text utilities used across the pipeline: slugs, sentences, word terms, near-identical texts."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[A-Za-z0-9_]+|[^\W\d_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its of on or so "
    "that the their then there these this to was what when where which who why will with you your".split()
)


def slugify(text: str, *, max_length: int = 100) -> str:
    """ASCII, lowercase, hyphen-separated; never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:max_length].rstrip("-") or "question"


def split_sentences(text: str) -> list[str]:
    """Sentences of prose (markdown line breaks also end a sentence)."""
    pieces: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            pieces.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return pieces


def terms(text: str) -> list[str]:
    """Lowercase word terms without stop words; code identifiers also yield their parts."""
    found: list[str] = []
    for word in _WORD.findall(text):
        parts = [p for p in re.split(r"[_]+", _CAMEL.sub("_", word)) if p]
        for term in dict.fromkeys([word.lower(), *(p.lower() for p in parts)]):
            if term not in STOPWORDS and len(term) > 1:
                found.append(term)
    return found


NEAR_IDENTICAL = 0.85
"""Share of word trigrams two texts must have in common to count as the same content (Jaccard)."""


def content_key(text: str) -> tuple[str, frozenset[tuple[str, ...]]]:
    """What near-identity compares: the text with whitespace and case normalised, and its word trigrams."""
    words = text.casefold().split()
    return " ".join(words), frozenset(tuple(words[i : i + 3]) for i in range(max(1, len(words) - 2)))


def same_content(left: tuple[str, frozenset[tuple[str, ...]]], right: tuple[str, frozenset[tuple[str, ...]]], *,
                 threshold: float = NEAR_IDENTICAL) -> bool:
    """Whether two content keys are the same content: equal, or sharing at least `threshold` of their word
    trigrams (one page indexed twice, with a different footer or date)."""
    if left[0] == right[0]:
        return True
    a, b = left[1], right[1]
    if not a or not b or min(len(a), len(b)) < threshold * max(len(a), len(b)):
        return False  # the Jaccard index is at most the ratio of the sizes: no need to intersect
    return len(a & b) / len(a | b) >= threshold


def near_identical(left: str, right: str, *, threshold: float = NEAR_IDENTICAL) -> bool:
    """Whether two texts are the same content (see same_content)."""
    return same_content(content_key(left), content_key(right), threshold=threshold)
