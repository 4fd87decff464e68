"""Extractive summaries without a language model: the most central sentences, whole and in reading order."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backend.pipeline.text import split_sentences, terms

Embed = Callable[[list[str]], list[list[float]]]

MAX_SENTENCES = 400
"""Sentences embedded per summary (one batch); more are sampled evenly across the texts."""
MIN_WORDS = 4
"""Shorter lines are labels, headings or fragments, not statements worth quoting."""
LONG_RUN = 500
"""A "sentence" longer than this is unpunctuated text (auto captions, run-on lists): read in word runs."""
RUN_CHARS = 240
DUPLICATE = 0.92
"""Cosine similarity above which a sentence repeats one already chosen."""
TITLE_MAX_WORDS = 10
PARAGRAPH = "\n\n"
SENTENCE_GAP = " "

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s*#{1,6}(\s|$)")
_RULE = re.compile(r"^\s*([-=*_]\s*){3,}$")
_BULLET = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)])\s+")
_NOT_WORD = re.compile(r"\W+")
HEADING_MAX_WORDS = 6
_TERMINAL = (".", "!", "?", ":", ";", '."', '?"', ".)", "…")


@dataclass(frozen=True)
class Sentence:
    """A candidate sentence and where it was read."""

    text: str
    order: tuple[int, int]
    """(index of its text, position in that text): reading order."""


def _paragraphs(text: str) -> list[str]:
    """The text's prose as paragraphs: hard-wrapped lines joined, each list item apart; no code blocks,
    headings, tables or rules. (A line break inside a markdown paragraph ends no sentence.)"""
    paragraphs: list[str] = []
    current: list[str] = []
    in_code = False
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if _FENCE.match(line):
            in_code = not in_code
        bullet = _BULLET.match(line) is not None
        # A paragraph's short first line without a sentence end, followed by a capitalised line, is a heading
        # (a PDF's text layer keeps no heading marks); a hard-wrapped line of prose is long.
        title_above = len(current) == 1 and (_looks_like_title(current[0].split(), current[0]) or (
            len(current[0].split()) <= HEADING_MAX_WORDS and not current[0].endswith(_TERMINAL)
            and stripped[:1].isupper()))
        ends = not stripped or in_code or _FENCE.match(line) or _HEADING.match(line) or _RULE.match(line)
        if ends or stripped.startswith("|") or bullet or title_above:
            if current:
                paragraphs.append(" ".join(current))
            current = []
        if not (ends or stripped.startswith("|")):
            current.append(_BULLET.sub("", stripped) if bullet else stripped)
    return paragraphs


def _runs(sentence: str) -> list[str]:
    """An overlong sentence cut after its words into runs of about RUN_CHARS (it has no sentence ends)."""
    runs: list[str] = []
    current: list[str] = []
    for word in sentence.split():
        if current and len(" ".join(current)) + 1 + len(word) > RUN_CHARS:
            runs.append(" ".join(current))
            current = []
        current.append(word)
    if current:
        runs.append(" ".join(current))
    return runs


def _looks_like_title(words: list[str], sentence: str) -> bool:
    """A short line without a sentence end whose words are mostly capitalised: a heading in plain text."""
    if sentence.endswith(_TERMINAL) or len(words) > TITLE_MAX_WORDS:
        return False
    alphabetic = [w for w in words if w[:1].isalpha()]
    return bool(alphabetic) and sum(w[0].isupper() for w in alphabetic) >= 0.7 * len(alphabetic)


def is_prose(sentence: str) -> bool:
    """Whether a sentence says something: enough words, mostly letters, not a heading."""
    words = sentence.split()
    if len(words) < MIN_WORDS:
        return False
    if sum(c.isalpha() for c in sentence) < 0.5 * len(sentence):
        return False  # code, numbers, tables
    return not _looks_like_title(words, sentence)


def candidate_sentences(texts: Sequence[str]) -> list[Sentence]:
    """Every prose sentence of the texts, in reading order, each once (near-duplicates are left to _choose)."""
    found: list[Sentence] = []
    seen: set[str] = set()
    for t, text in enumerate(texts):
        position = 0
        for paragraph in _paragraphs(text):
            for sentence in split_sentences(paragraph):
                for piece in _runs(sentence) if len(sentence) > LONG_RUN else [sentence]:
                    key = _NOT_WORD.sub(" ", piece.casefold()).strip()
                    if key in seen or not is_prose(piece) or piece.rstrip().endswith(":"):
                        continue  # a sentence ending in ":" announces a list or an example that a summary leaves out
                    seen.add(key)
                    found.append(Sentence(piece, (t, position)))
                    position += 1
    return found


def _sample(items: list[Sentence], limit: int) -> list[Sentence]:
    """At most `limit` items spread evenly over the list (deterministic)."""
    if len(items) <= limit:
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else [0.0 for _ in vector]


def _dot(left: Sequence[float], right: Sequence[float]) -> float:
    return sum(a * b for a, b in zip(left, right, strict=False))


def _centrality(vectors: list[list[float]]) -> list[float]:
    """Each vector's cosine similarity to the centroid (ranks like the mean similarity to all others)."""
    dimension = len(vectors[0])
    centroid = _unit([sum(v[d] for v in vectors) for d in range(dimension)])
    return [_dot(v, centroid) for v in vectors]


def _choose(sentences: list[Sentence], vectors: list[list[float]], max_chars: int) -> list[Sentence]:
    """Most central first, skipping repeats and what no longer fits; each costs its length plus a gap."""
    scores = _centrality(vectors)
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].order))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        length = len(sentences[i].text)
        if used + length > max_chars:
            continue
        if any(_dot(vectors[i], vectors[j]) >= DUPLICATE for j in chosen):
            continue
        chosen.append(i)
        used += length + len(PARAGRAPH)  # the widest separator, so the joined text never exceeds max_chars
    return sorted((sentences[i] for i in chosen), key=lambda s: s.order)


def _join(sentences: list[Sentence]) -> str:
    """Sentences of one text joined by spaces, texts separated by a blank line."""
    paragraphs: list[list[str]] = []
    last_text = -1
    for sentence in sentences:
        if sentence.order[0] != last_text:
            paragraphs.append([])
            last_text = sentence.order[0]
        paragraphs[-1].append(sentence.text)
    return PARAGRAPH.join(SENTENCE_GAP.join(p) for p in paragraphs)


def extractive_summary(texts: Sequence[str], *, max_chars: int, embed: Embed) -> str:
    """The texts' most central sentences by embedding centrality, whole, in reading order, ≤ max_chars.

    Headings, code, tables, fragments of fewer than MIN_WORDS words and sentences announcing what follows them
    ("… as follows:") are never picked; near-duplicates
    are picked once. Empty when no sentence qualifies or fits. Deterministic for a deterministic `embed`.
    """
    sentences = [s for s in candidate_sentences(texts) if len(s.text) <= max_chars]
    sentences = _sample(sentences, MAX_SENTENCES)
    if not sentences:
        return ""
    vectors = [_unit(v) for v in embed([s.text for s in sentences])]
    return _join(_choose(sentences, vectors, max_chars))


def frequent_sentences(texts: Sequence[str], max_chars: int) -> str:
    """Without an embedder: the sentences whose terms are most frequent across all texts, in reading order."""
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
