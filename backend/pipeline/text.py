"""Small text utilities used across the pipeline: slugs, sentences, word terms."""

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
