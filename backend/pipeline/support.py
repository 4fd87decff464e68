"""The trust score: how well the retrieved evidence supports an answer to *this* question, in [0, 1].

A near miss (a question next to the guru's subject about something its sources never mention) retrieves
passages that score well: same domain, same words but one. What gives it away is that one word: the
question's distinctive terms, weighted by how rare they are in the guru's own corpus, are missing from the
evidence, often from the whole guru. So the score combines the best grade (the reranker's, or the LLM's)
with how much of the question's distinctive weight the kept evidence holds, and how much of it the guru
does not hold at all, in one logistic model whose weights were fitted on labelled questions (bench/quality.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Container, Mapping, Sequence
from dataclasses import dataclass, field

from backend.pipeline.rerank_local import _stem, content_tokens, query_terms, tokenize

KEEP_WINDOW = 0.35
"""Contexts this far below the best one still support the answer (a second page of a two-page answer)."""
KEEP_FLOOR = 0.0
"""No context below this grade is kept, however close to the best."""
LINKED_WINDOW = 0.5
"""How far below the best a context a kept one links to may be graded and still be kept (see keep_window)."""


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_COMPOUND = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)+")
_PART_SEPARATOR = re.compile(r"[-.]")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n)\W*$")


def _mixed_case(word: str) -> bool:
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _named_compound(word: str) -> bool:
    """"Flask-Login", "Socket.IO": parts joined by - or . with a capital in a part after the first; "CPU-heavy"
    or "UTF-8" only qualify a word, and their capitalised part is looked up on its own."""
    return any(c.isupper() for part in _PART_SEPARATOR.split(word)[1:] for c in part)


def whole_word_terms(text: str) -> set[str]:
    """Mixed-case words, words with digits and named compounds as one term each ("GraphQL" → "graphql", "S3",
    "Flask-Login" → "flask-login"), beside the parts the reranker splits them into: a name must be looked up
    whole, or "OAuth" would be found as "auth" and "Flask-Login" as two words every Flask guru holds."""
    words = {_stem(word.lower()) for word in _WORD.findall(text)
             if _mixed_case(word) or any(c.isdigit() for c in word)}
    return words | {word.lower() for word in _COMPOUND.findall(text) if _named_compound(word)}


def text_terms(text: str) -> set[str]:
    """The terms a text holds, as the guru's counts record them (see sources.term_stats.chunk_terms)."""
    return set(content_tokens(tokenize(text))) | whole_word_terms(text)


def name_terms(question: str) -> list[str]:
    """Words the question writes as names: capitalised inside a sentence, all capitals, mixed case, or with
    digits ("Pydantic", "JWT", "OAuth", "S3"), as whole-word terms."""
    names = []
    for match in _WORD.finditer(question):
        word = match.group()
        if len(word) < 2:
            continue  # "I", and single letters of a list
        capitalised = word[0].isupper() and not _SENTENCE_START.search(question[: match.start()])
        acronym = len(word) >= 2 and word.isupper()
        stem = _stem(word.lower())
        if not content_tokens([stem]):
            continue  # a capitalised stopword ("'Not Found'", "IF"): the guru's counts never hold one
        if capitalised or acronym or _mixed_case(word) or any(c.isdigit() for c in word):
            names.append(stem)
    names += [word.lower() for word in _COMPOUND.findall(question) if _named_compound(word)]
    return list(dict.fromkeys(names))


COINED_PIECES = 3
"""A lower-case word that a general English word-piece vocabulary (the embedder's) can only spell in this many
pieces or more is a coined technical name ("memcached", "logrotate", "kafka"): people write those in lower case
as often as not. Everyday words, even ones a guru never uses ("laptop", "grey", "wifi"), take one or two."""
COINED_PAIR_LETTERS = 5
"""A word of two pieces is coined from this length on when no English word list accounts for it ("redis",
"ansible", "heroku"); shorter ones are mostly abbreviations every technical text uses ("json", "url", "cli")."""
PARTICLES = frozenset({"up", "in", "on", "out", "off", "by", "down", "over", "back"})
"""Short words that make compounds with a verb or noun ("signup", "login", "inbox")."""
_ENDINGS = ("s", "es", "d", "ed", "ing", "r", "er", "ers", "ly", "ation", "ations", "ity", "ness")
_LOWER_WORD = re.compile(r"(?<![\w.-])[a-z]{3,}(?![\w.-])")


def word_pieces(word: str, vocabulary: Container[str]) -> int:
    """How many WordPiece pieces `word` takes (greedy longest match first, continuations written "##…"); a word
    with no first piece counts as its length."""
    start, pieces = 0, 0
    while start < len(word):
        end = len(word)
        while end > start and (word[start:end] if start == 0 else f"##{word[start:end]}") not in vocabulary:
            end -= 1
        if end == start:
            return max(len(word), COINED_PIECES)
        start, pieces = end, pieces + 1
    return pieces


def english(word: str, words: Container[str]) -> bool:
    """The word list holds the word, or the word it inflects or derives from ("attaches", "chunked", "errored"):
    a list of everyday speech lists common forms only."""
    if word in words:
        return True
    for ending in _ENDINGS:
        stem = word[: -len(ending)]
        if ending in ("d", "r") and not stem.endswith("e"):
            continue  # "used", "user": a bare d or r ends a word ending in e ("systemd" is no form of "system")
        if word.endswith(ending) and len(stem) >= 3 and (
                stem in words or f"{stem}e" in words or (stem[-1] == stem[-2] and stem[:-1] in words)
                or (stem[-1] == "i" and f"{stem[:-1]}y" in words)):
            return True
    return False


def compound(word: str, words: Container[str]) -> bool:
    """Two listed words joined, each of three letters or more or one a particle ("checkbox", "signup")."""
    for cut in range(2, len(word) - 1):
        head, tail = word[:cut], word[cut:]
        if head in words and english(tail, words) and (
                min(len(head), len(tail)) >= 3 or head in PARTICLES or tail in PARTICLES):
            return True
    return False


def is_coined(word: str, vocabulary: Container[str], words: Container[str],
              common: Container[str] = frozenset()) -> bool:
    """A coined technical name: three or more word pieces (see COINED_PIECES) unless everyday English uses it
    often (`common`: "coworker"), or two for a word of COINED_PAIR_LETTERS or more that the English word list
    accounts for neither alone nor as a compound."""
    pieces = word_pieces(word, vocabulary)
    if pieces >= COINED_PIECES:
        return not english(word, common)
    return pieces == 2 and len(word) >= COINED_PAIR_LETTERS and not english(word, words) \
        and not compound(word, words)


def coined_words(question: str, vocabulary: Container[str], words: Container[str],
                 common: Container[str] = frozenset()) -> list[str]:
    """The question's lower-case coined words (see is_coined), stemmed as the guru's counts are."""
    stems = [_stem(w) for w in _LOWER_WORD.findall(question) if is_coined(w, vocabulary, words, common)]
    return list(dict.fromkeys(content_tokens(stems)))


@dataclass(frozen=True)
class Vocabulary:
    """Document frequencies of the question's terms over the guru's live chunks (see sources.term_stats)."""

    chunks: int
    df: Mapping[str, int]
    complete: bool
    """Every live source has current counts; otherwise a term not counted may still be in the guru."""
    coined: tuple[str, ...] = ()
    """The question's coined words (`coined_words`): absent from the guru, they count as an absent name."""
    misspelt: frozenset[str] = frozenset()
    """Coined words the guru lacks that are a typo away from a word it holds: not absent, only misspelt."""
    variants: frozenset[str] = frozenset()
    """Names the guru lacks whose meaning the evidence holds under another form ("macbook" beside "mac")."""


@dataclass(frozen=True)
class SupportWeights:
    """trust = sigmoid(bias + best * logit(best grade) + coverage * held + absent * missing + name * absent_name)."""

    bias: float = 1.72
    best: float = 1.06
    coverage: float = 0.24
    absent: float = -1.32
    name: float = -2.42


@dataclass(frozen=True)
class Support:
    """The trust decision: which contexts (by index) are kept, the trust score, and the signals behind it."""

    kept: tuple[int, ...]
    trust_score: float
    signals: Mapping[str, float] = field(default_factory=dict)


def _logit(p: float) -> float:
    p = min(1 - 1e-4, max(1e-4, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def idf(df: int, chunks: int) -> float:
    """BM25's inverse document frequency (never negative); a term the guru lacks gets the most."""
    return math.log(1 + (chunks - df + 0.5) / (df + 0.5))


def keep_window(scores: Sequence[float], *, window: float = KEEP_WINDOW, floor: float = KEEP_FLOOR,
                links: Collection[tuple[int, int]] = (), notes: Collection[int] = ()) -> tuple[int, ...]:
    """The contexts close enough to the best to support the answer with it, and those a kept one links to that
    are within LINKED_WINDOW of the best: the page itself sends its reader there ("split the app into modules
    (see packages)"), so the page it names is part of its answer though the question's words are not in it.

    `notes` (maintainer notes, chosen apart by their own floor) are kept, and the window is the pages' own: a
    note written for the question must not push out the pages that would support the answer without it."""
    pages = [score for i, score in enumerate(scores) if i not in notes]
    if not pages:
        return tuple(i for i in range(len(scores)) if i in notes)
    cut = max(floor, max(pages) - window)
    kept = {i for i, score in enumerate(scores) if score >= cut or i in notes}
    linked_cut = max(floor, max(pages) - LINKED_WINDOW)
    kept |= {j for i, j in links if i in kept and 0 <= j < len(scores) and scores[j] >= linked_cut}
    return tuple(sorted(kept))


def term_weights(question: str, vocabulary: Vocabulary | None, texts: Sequence[str]) -> dict[str, tuple[float, bool]]:
    """Each distinctive question term → (weight in [0, 1], whether the guru holds it at all).

    Rarity comes from the guru's own document frequencies; without complete counts, from the retrieved
    texts (a term none of them holds is then not known to be absent from the guru, only from what was found).
    """
    terms = list(dict.fromkeys([*query_terms(question), *name_terms(question)]))
    if vocabulary is not None and vocabulary.complete and vocabulary.chunks:
        ceiling = idf(0, vocabulary.chunks)
        return {t: (idf(vocabulary.df.get(t, 0), vocabulary.chunks) / ceiling, vocabulary.df.get(t, 0) > 0)
                for t in terms}
    documents = [text_terms(text) for text in texts]
    count = max(1, len(documents))
    ceiling = idf(0, count)
    return {t: (idf(sum(t in d for d in documents), count) / ceiling, True) for t in terms}


def absent_names(question: str, vocabulary: Vocabulary | None) -> list[str]:
    """The question's names (and coined words) the guru does not hold in any form; [] when absence is not known
    (counts missing or out of date)."""
    if vocabulary is None or not vocabulary.complete or vocabulary.chunks <= 0:
        return []
    return [n for n in dict.fromkeys([*name_terms(question), *vocabulary.coined])
            if not vocabulary.df.get(n, 0) and n not in vocabulary.misspelt and n not in vocabulary.variants]


_CODE_NAME = re.compile(r"`([^`\n]{2,60})`|(?<![\w.$])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\("
                        r"|(?<![\w.$])([a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z]\w*)(?![\w$])")


def code_names(question: str) -> list[str]:
    """What the question writes as code: a call (`fs.watch()`, `spawn()`), a snake_case or camelCase name, or a
    backticked span."""
    return list(dict.fromkeys(next(g for g in m.groups() if g) for m in _CODE_NAME.finditer(question)))


_DOTTED_BEFORE = r"(?<![\w.$])"
_BARE_BEFORE = r"(?<![\w$])"


def quoted_by(names: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether one of `names` occurs verbatim (same case, not inside a longer name) in one of `texts`; a name the
    question writes bare is also quoted qualified ("toString()" by `buf.toString()`: the asker left out the object,
    the docs name it), a dotted one only as written."""
    patterns = [re.compile((_DOTTED_BEFORE if "." in name else _BARE_BEFORE) + re.escape(name) + r"(?![\w$])")
                for name in names]
    return any(pattern.search(text) for pattern in patterns for text in texts)


def support_signals(question: str, texts: Sequence[str], scores: Sequence[float], kept: Sequence[int],
                    vocabulary: Vocabulary | None) -> dict[str, float]:
    """The trust model's inputs: the best grade, the share of the question's distinctive weight the kept
    evidence holds, and the share the guru does not hold anywhere."""
    weights = term_weights(question, vocabulary, texts)
    total = sum(w for w, _ in weights.values())
    evidence = set().union(*(text_terms(texts[i]) for i in kept)) if kept else set()
    held = sum(w for t, (w, _) in weights.items() if t in evidence)
    missing = sum(w for w, known in weights.values() if not known)
    absent = absent_names(question, vocabulary)
    if absent and quoted_by(code_names(question), [texts[i] for i in kept]):
        absent = []  # a question about `fs.watch()` "on my Ubuntu box" is about fs.watch(): the name is its setting
    return {"best": max(scores) if scores else 0.0, "held": held / total if total else 1.0,
            "missing": missing / total if total else 0.0, "absent_name": 1.0 if absent else 0.0}


def support(question: str, texts: Sequence[str], scores: Sequence[float], *, threshold: float,
            vocabulary: Vocabulary | None, weights: SupportWeights | None = None, subject: bool = False,
            links: Collection[tuple[int, int]] = (), notes: Collection[int] = ()) -> Support:
    """Decide what an answer may rest on. Nothing is kept when the trust score is under the threshold.

    `subject`: the question is about the guru's subject as a whole (answered from its summary), whose words
    are generic by nature: its grade alone is the trust score.
    """
    w = weights or SupportWeights()
    kept = keep_window(scores, links=links, notes=notes)
    signals = support_signals(question, texts, scores, kept, vocabulary)
    if not scores:
        return Support((), 0.0, signals)
    if subject:
        trust = signals["best"]
    else:
        trust = _sigmoid(w.bias + w.best * _logit(signals["best"]) + w.coverage * signals["held"]
                         + w.absent * signals["missing"] + w.name * signals["absent_name"])
    signals["trust"] = round(trust, 4)
    return Support(kept if trust >= threshold else (), trust, signals)
