"""Small text utilities used across the pipeline: slugs, sentences, word terms, near-identical texts."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[A-Za-z0-9_]+|[^\W\d_]+", re.UNICODE)
# A sentence ends at . ! or ? (and the quotes, brackets or emphasis closing it), then space, then what can open
# one: a capital, a digit, a quote, a bracket, a code span or emphasis.
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]+[\"'\u201d\u2019)\]*_`]*\s+(?=[\"'\u201c\u2018(\[*_`]*[A-Z0-9`])")
_LAST_WORD = re.compile(r"[\w.]*$")
# Words whose period is no full stop, even before a capital ("e.g. Redis", "Fig. 3", "Dr. Smith").
ABBREVIATIONS = frozenset(
    "al approx ca cf co corp dept dr e.g eg eq esp et fig figs i.e ie inc incl jr ltd mr mrs ms op pp prof "
    "ref refs resp sr st vol vols vs viz jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_OPENERS = "\"'\u201c\u2018([*_`"
_CLOSERS = "\"'\u201d\u2019)]*_`"
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
    return [sentence for line in text.splitlines() for sentence in sentences_of(line)]


def sentences_of(prose: str) -> list[str]:
    """The sentences of one run of prose, whole: no cut after an abbreviation, an initial or a list number.

    "app.config", "v4.2" and file names never split (no space follows their dots); "e.g. Redis" and
    "J. Smith" do not either, while "version 4.2. Then" does.
    """
    sentences: list[str] = []
    start = 0
    for end in _SENTENCE_END.finditer(prose):
        word = _LAST_WORD.search(prose, max(start, end.start() - 12), end.start())  # abbreviations are short
        before = word.group(0).strip(".").lower() if word else ""
        too_short = len(prose[start : end.start()].strip()) < 3  # a list number ("1. Install")
        if before in ABBREVIATIONS or (len(before) == 1 and before.isalpha()) or too_short:
            continue
        sentences.append(prose[start : end.end()].strip())
        start = end.end()
    sentences.append(prose[start:].strip())
    return [s for s in sentences if s]


def starts_sentence(text: str) -> bool:
    """Whether the text reads as a sentence's start (not a lower-case or punctuation continuation); one may
    start with a code span (`` `retry()` waits``)."""
    if text.startswith("`"):
        return True
    head = text.lstrip(_OPENERS + " ")[:1]
    return bool(head) and not head.islower() and (head.isalnum() or text[:1] not in ",.;:)]!?")


def ends_sentence(text: str) -> bool:
    """Whether the text reads as a sentence's end (a full stop, question, exclamation or colon)."""
    tail = text.rstrip(_CLOSERS + " ")[-1:]
    return tail in (".", "!", "?", ":", ";", "…", "。", "！", "？")


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


def within_edits(left: str, right: str, limit: int) -> bool:
    """Whether `right` is at most `limit` edits from `left` (insert, delete, substitute, or swap two neighbours:
    the typos people make), computed only where it can still be within the limit."""
    if abs(len(left) - len(right)) > limit:
        return False
    before: list[int] = []
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, start=1):
        current = [i] + [0] * len(right)
        for j, b in enumerate(right, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == right[j - 2] and left[i - 2] == b:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return False
        before, previous = previous, current
    return previous[-1] <= limit


def typo_of(word: str, known: str, limit: int) -> bool:
    """Whether `word` is `known` mistyped (see within_edits), but not `known` with letters added at its end
    ("systemd", "flaskr": a new name built on a word) unless the one added repeats its last letter (a key held)."""
    extends = len(word) > len(known) and word.startswith(known)
    if extends and word[len(known):] != known[-1] * (len(word) - len(known)):
        return False
    return within_edits(word, known, limit)
