"""What an offline extract quotes from one context: the window of sentences that best answers the question,
with the code it introduces and what follows it, and a second window for the question's terms the first lacks."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backend.pipeline.excerpts import Block, BlockKind
from backend.pipeline.text import terms

SENTENCES_PER_CONTEXT = 3
MAX_LIST_ITEMS = 6
FOLLOW_CHARS = 700  # what follows the best window in its section: docs restate a question, then answer it
COMPLEMENT_SHARE = 0.5
"""A second window is quoted when what it adds weighs at least this share of the rarest question term found (the
second half of a two-part question is often one or two words: "at the top level instead")."""
HEADING_WEIGHT = 0.25
DENSITY_WEIGHT = 0.3
BLOCK_COST = 0.1
LONG_KEY = 50
TWIN_NAMES = 0.7
_CODE_WORD = re.compile(r"[A-Za-z_$][\w$]*")
NAMED_HEADING = 2.0
"""A window opening a section headed by a name the question asks about (`### dns.lookup()`) counts each such name
this many times: that is where the docs define it, and a passage naming every asked API in passing would otherwise
outscore it (measured on an API reference the repository never sees: expected facts 0.54 -> 0.63)."""
_QUESTION_WORDS = frozenset(
    "way possible want need please should would could get make use using "
    "all any both each every other some such same own only just also too very not no than many much find".split())
"""Words a question is phrased with, not about: a passage holding "both" or "how many" answers nothing by them
(pronouns and "work" or "out" stay: "share one", "extra work" and "kept out" carry the question)."""
_EXACT = re.compile(r"`([^`]{2,80})`|\"([^\"]{2,80})\"|(?<![\w.])(-{0,2}[A-Za-z_][\w.:/-]*[\w)]|\d+(?:\.\d+)+|\d{2,})")
_SPECIAL = re.compile(r"[_.:/()]|\d|[a-z][A-Z]|^[A-Z]{2,}$|^-")
_REFERRING = re.compile(r"(?:This|That|These|Those|It|They|Such|However|Otherwise|Then|Also)\b")


def _stem(term: str) -> str:
    """A light English stem, so "retries", "retried" and "retrying" match "retry" (and "installation" "install")."""
    for suffix, replacement, shortest in (("ation", "", 8), ("ies", "y", 5), ("ied", "y", 5), ("ing", "", 6),
                                          ("ed", "", 5), ("es", "", 5), ("s", "", 4)):
        if term.endswith(suffix) and len(term) >= shortest and not term.endswith("ss"):
            if suffix == "es" and not term.endswith(("ses", "xes", "ches", "shes", "zes")):
                continue
            term = term[: len(term) - len(suffix)] + replacement
            break
    return term[:-1] if term.endswith("e") and len(term) > 4 else term


def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(t) for t in terms(text))


def block_key(block: Block) -> str:
    """What counts as the same passage: the words, whatever the spacing, case or markup."""
    return " ".join(re.sub(r"\W+", " ", block.text.casefold()).split())


def _seen(key: str, shown: set[str]) -> bool:
    """Shown already: the same words, or a long shown passage found whole inside it (a sentence merged with
    another, or a paragraph re-wrapped into one line)."""
    return key in shown or any(len(old) >= LONG_KEY and old in key for old in shown)


class Scorer:
    """How well blocks match the question: its terms weighted by their rarity among the blocks of the answer's
    contexts (a word every passage shares counts little), exact identifiers, numbers and quoted names more."""

    def __init__(self, question: str, blocks: Sequence[Block]) -> None:
        wanted = _stems(question) - _QUESTION_WORDS
        self._terms: dict[Block, frozenset[str]] = {b: _stems(b.text) & wanted for b in blocks}
        frequency = Counter(t for found in self._terms.values() for t in found)
        self.weights = {t: math.log((len(blocks) + 1) / (frequency[t] + 0.5)) for t in wanted}
        self.exact_weight = max((w for t, w in self.weights.items() if frequency[t]), default=1.0)
        self._exact = _exact_patterns(question)
        self._hits = {b: frozenset(i for i, p in enumerate(self._exact) if p.search(b.text)) for b in blocks}
        self.firsts = {b for i, b in enumerate(blocks) if i == 0 or blocks[i - 1].section != b.section}
        self._named = {h: sum(1 for p in self._exact if p.search(h)) for h in {b.heading for b in blocks}}

    def base(self, block: Block) -> float:
        return sum(self.weights.get(t, 0.0) for t in self._terms.get(block, ())) \
            + self.exact_weight * len(self._hits.get(block, ()))

    def window(self, blocks: Sequence[Block]) -> float:
        """Distinct terms covered, the section heading's terms, and density; each block past the first costs a
        little, so a sentence sharing only common words does not pad the window."""
        covered, found = self.covered(blocks)
        hits = float(len(found))
        if blocks[0] in self.firsts:
            hits += NAMED_HEADING * self._named.get(blocks[0].heading, 0)
        heading = sum(self.weights.get(t, 0.0) for t in _stems(blocks[0].heading))
        return sum(self.weights.get(t, 0.0) for t in covered) + self.exact_weight * hits \
            + HEADING_WEIGHT * heading + DENSITY_WEIGHT * sum(self.base(b) for b in blocks) \
            - BLOCK_COST * self.exact_weight * (len(blocks) - 1)

    def covered(self, blocks: Sequence[Block]) -> tuple[frozenset[str], frozenset[int]]:
        """The question's terms and exact names these blocks hold."""
        return (frozenset().union(*(self._terms.get(b, frozenset()) for b in blocks)),
                frozenset().union(*(self._hits.get(b, frozenset()) for b in blocks)))

    def gain(self, blocks: Sequence[Block], known: tuple[frozenset[str], frozenset[int]]) -> float:
        """What the blocks add to what is `known` (already quoted): the weight of the terms and names only they
        hold; each block past the first costs a little, as in `window`."""
        found, hits = self.covered(blocks)
        return sum(self.weights.get(t, 0.0) for t in found - known[0]) + self.exact_weight * len(hits - known[1]) \
            - BLOCK_COST * self.exact_weight * (len(blocks) - 1)

    def defines(self, block: Block) -> bool:
        """Its section is headed by a name asked about (`.. py:data:: NAME`): it is quoted from its first sentence."""
        return self._named.get(block.heading, 0) > 0

    def words(self, text: str) -> float:
        return sum(self.weights.get(t, 0.0) for t in _stems(text))


def _exact_patterns(question: str) -> list[re.Pattern[str]]:
    """Identifiers (snake_case, dotted, camelCase, CONSTANT, --flag), version numbers and quoted names."""
    names: dict[str, None] = {}
    for found in _EXACT.finditer(question):
        quoted = found.group(1) or found.group(2)
        token = quoted or found.group(3).rstrip(".:/")
        if quoted or _SPECIAL.search(token):
            names.setdefault(token.casefold(), None)
    # A name is also found qualified ("View.init_every_request" for init_every_request); a number is not
    # found inside another ("1.2" in "11.2" or "0.1.2").
    return [re.compile(rf"(?<![\w{'.' if name[:1].isdigit() else ''}]){re.escape(name)}(?!\w)", re.IGNORECASE)
            for name in list(names)[:8]]


@dataclass(frozen=True)
class _Window:
    start: int
    end: int
    score: float


def _best_window(blocks: Sequence[Block], scorer: Scorer, shown: set[str],
                 score_of: Callable[[Sequence[Block]], float] | None = None) -> _Window | None:
    """The best run of consecutive blocks of one section (at most SENTENCES_PER_CONTEXT sentences or items and
    one code block), none of them shown already; ties go to the earliest, shortest run."""
    best: _Window | None = None
    score_of = score_of or scorer.window
    for start, first in enumerate(blocks):
        if first not in scorer.firsts and scorer.defines(first):
            continue
        texts, codes, keys = 0, 0, set()
        for end in range(start, len(blocks)):
            block = blocks[end]
            key = block_key(block)
            if block.section != first.section or _seen(key, shown) or key in keys:
                break
            keys.add(key)
            codes, texts = (codes + 1, texts) if is_code(block) else (codes, texts + 1)
            if texts > SENTENCES_PER_CONTEXT or codes > 1:
                break
            score = score_of(blocks[start : end + 1])
            if best is None or score > best.score + 1e-9:
                best = _Window(start, end, score)
    return best


def twin_examples(blocks: Sequence[Block]) -> set[str]:
    """Code blocks that repeat the code block right before them in another syntax (Node.js's CommonJS and ES
    module versions of every example): nearly the same names (TWIN_NAMES of them shared). One is quoted."""
    twins: set[str] = set()
    for before, block in zip(blocks, blocks[1:], strict=False):
        if is_code(before) and is_code(block) and before.section == block.section:
            left, right = set(_CODE_WORD.findall(before.text)), set(_CODE_WORD.findall(block.text))
            if left and right and len(left & right) >= TWIN_NAMES * len(left | right):
                twins.add(block_key(block))
    return twins


def choose(blocks: Sequence[Block], scorer: Scorer, shown: set[str]) -> tuple[list[Block], list[Block]]:
    """What a context shows: its best window, with the sentence it builds on, the code or list it introduces
    and what follows it; then, apart, the window holding most of the question's terms and names that the first
    one lacks (the second half of a two-part question), when it adds enough. ([], []) when the context's best
    window was shown already (by an earlier context)."""
    twins = twin_examples(blocks)
    unseen = _best_window(blocks, scorer, twins)
    if unseen is None or all(_seen(block_key(b), shown) for b in blocks[unseen.start : unseen.end + 1]):
        return [], []
    shown = shown | twins
    window = _best_window(blocks, scorer, shown)
    if window is None:
        return [], []
    start, end = _extend(blocks, window, shown, scorer)
    stop = _follow(blocks, start, end, shown)
    first = _unannounced([b for b in blocks[start : stop + 1] if not _seen(block_key(b), shown)])
    return first, _complement(blocks, scorer, shown | {block_key(b) for b in blocks[start : stop + 1]}, first)


def _complement(blocks: Sequence[Block], scorer: Scorer, shown: set[str], first: list[Block]) -> list[Block]:
    """The window adding most of what `first` lacks, extended like the first; [] when it adds too little."""
    known = scorer.covered(first)
    window = _best_window(blocks, scorer, shown, lambda run: scorer.gain(run, known))
    if window is None or window.score < COMPLEMENT_SHARE * scorer.exact_weight:
        return []
    start, end = _extend(blocks, window, shown, scorer)
    return _unannounced([b for b in blocks[start : end + 1] if not _seen(block_key(b), shown)])


def lead_in(blocks: Sequence[Block], first: Block, shown: set[str]) -> list[Block]:
    """The paragraph right before a passage that opens a paragraph, when it goes on about the same thing (they
    share a word): what the passage builds on ("… you'll get a `RuntimeError`." before "If your generator
    relies on data in `request`, use the `stream_with_context` wrapper."). [] when it is code, another section
    or shown already."""
    start = next(i for i, b in enumerate(blocks) if b is first)
    free = _free(blocks, start, shown)
    if not free(start - 1) or is_code(blocks[start - 1]) or blocks[start - 1].paragraph == first.paragraph:
        return []
    top = start - 1
    while free(top - 1) and not is_code(blocks[top - 1]) and blocks[top - 1].paragraph == blocks[start - 1].paragraph:
        top -= 1
    lead = list(blocks[top:start])
    return lead if _stems(" ".join(b.text for b in lead)) & _stems(first.text) else []


def best_score(blocks: Sequence[Block], scorer: Scorer) -> float:
    """How well the context's best passage matches the question (0.0 when it has none)."""
    window = _best_window(blocks, scorer, set())
    return window.score if window is not None else 0.0


def further(blocks: Sequence[Block], scorer: Scorer, shown: set[str], bar: float) -> list[Block]:
    """The context's best passage not quoted yet, extended as the first one is, when it scores above `bar`;
    else []. It never ends on a sentence announcing what it leaves out ("It may have one of the following
    messages:")."""
    window = _best_window(blocks, scorer, shown)
    if window is None or window.score < bar or window.score <= 0:
        return []
    start, end = _extend(blocks, window, shown, scorer)
    chosen = _unannounced([b for b in blocks[start : end + 1] if not _seen(block_key(b), shown)])
    return [] if chosen[-1:] and chosen[-1].introduces else chosen


def _unannounced(chosen: list[Block]) -> list[Block]:
    """The passage without the sentences at its end that announce what it does not hold (the context was cut
    before the list or code they introduce); a passage of one such sentence stays as it is."""
    while len(chosen) > 1 and chosen[-1].introduces:
        chosen = chosen[:-1]
    return chosen


def _extend(blocks: Sequence[Block], window: _Window, shown: set[str], scorer: Scorer) -> tuple[int, int]:
    """The window with the sentence it builds on, and the code or list it introduces."""
    start, end = window.start, window.end
    free = _free(blocks, start, shown)
    first, last = blocks[start], blocks[end]
    if free(start - 1) and not is_code(blocks[start - 1]) and (
            is_code(first) or (_REFERRING.match(first.text) and blocks[start - 1].paragraph == first.paragraph)):
        start -= 1  # the sentence that introduces the code, or that "This"/"It" refers to
    has_code = any(is_code(b) for b in blocks[start : end + 1])
    if free(end + 1) and not has_code and is_code(blocks[end + 1]):
        end += 1  # the code or command right after the sentences belongs to them
    elif last.introduces:
        while free(end + 1) and blocks[end + 1].kind is BlockKind.ITEM and end - window.end < MAX_LIST_ITEMS:
            end += 1
    elif end == start and free(end + 1) and blocks[end + 1].paragraph == last.paragraph \
            and blocks[end + 1].kind is BlockKind.SENTENCE:
        end += 1  # one sentence alone: the next one of its paragraph usually completes it
        if not has_code and free(end + 1) and is_code(blocks[end + 1]) and scorer.base(blocks[end + 1]) > 0:
            end += 1  # and the code right after it, when that code is about the question too
    return start, end


def _inside(blocks: Sequence[Block], start: int) -> Callable[[int], bool]:
    return lambda i: 0 <= i < len(blocks) and blocks[i].section == blocks[start].section


def _free(blocks: Sequence[Block], start: int, shown: set[str]) -> Callable[[int], bool]:
    inside = _inside(blocks, start)
    return lambda i: inside(i) and not _seen(block_key(blocks[i]), shown)


def _follow(blocks: Sequence[Block], start: int, end: int, shown: set[str]) -> int:
    """The window's end moved over what follows it in its section, over a sentence an earlier context showed
    (a definition often repeats the prose that cited it); `_fit` drops the farthest first. It never ends on a
    sentence announcing code it leaves out ("The following are equivalent:")."""
    inside, free = _inside(blocks, start), _free(blocks, start, shown)
    size = sum(len(b.text) for b in blocks[start : end + 1])
    codes = sum(is_code(b) for b in blocks[start : end + 1])
    last = end
    while inside(last + 1) and size < FOLLOW_CHARS:
        if free(last + 1):
            if is_code(blocks[last + 1]):
                if codes >= 2:
                    break
                codes += 1
            size += len(blocks[last + 1].text)
        last += 1
    if codes == 0:  # the prose it stopped in ends with an example: the rest of that paragraph and the example
        ahead = last + 1
        while inside(ahead) and not is_code(blocks[ahead]) and blocks[ahead].paragraph == blocks[last].paragraph:
            ahead += 1
        last = ahead if free(ahead) and is_code(blocks[ahead]) else last
    while last > end and blocks[last].introduces and inside(last + 1) and is_code(blocks[last + 1]):
        last -= 1
    return last


def is_code(block: Block) -> bool:
    return block.kind in (BlockKind.CODE, BlockKind.TABLE)
