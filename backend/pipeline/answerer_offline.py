"""The offline answerer: used when no LLM is configured. It extracts, cites and says so; it never
pretends to be a language model."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from backend.pipeline.answer_types import (
    AnswerContext,
    AnswerRequest,
    Grade,
    GradeInput,
    Understanding,
    UnderstandRequest,
)
from backend.pipeline.excerpts import Block, BlockKind, mostly_prose, segment
from backend.pipeline.extractive import extractive_summary, frequent_sentences
from backend.pipeline.llm_types import CancelToken, Completion, Flow, StreamEvent, TextDelta, Usage
from backend.pipeline.ports import Embedder
from backend.pipeline.text import ends_sentence, starts_sentence, terms
from backend.pipeline.understanding import understand_by_rules

OFFLINE_MODEL = "offline-extractive"
NO_LLM_NOTICE = (
    "*No language model is configured for this OpenGuru, so this is not a generated answer: these are "
    "the passages from the sources that best match your question.*\n\n"
)
MAX_CONTEXTS = 3  # contexts quoted; one whose best passage was already quoted gives its place to the next
MAX_CANDIDATES = 8
MAX_CONTEXT_CHARS = 40_000
SENTENCES_PER_CONTEXT = 3
MAX_ANSWER_CHARS = 2500
MAX_EXCERPT_CHARS = 1400
MIN_EXCERPT_CHARS = 300  # kept free for each context still to come, so the first cannot take the whole answer
MAX_SENTENCE_CHARS = 600
MAX_CODE_LINES = 25
MAX_CODE_LINE_CHARS = 200
MAX_LIST_ITEMS = 6
FOLLOW_CHARS = 700  # what follows the best window in its section: docs restate a question, then answer it
MAX_TABLE_ROWS = 8
HEADING_WEIGHT = 0.25
DENSITY_WEIGHT = 0.3
BLOCK_COST = 0.1
LONG_KEY = 50
_QUESTION_WORDS = frozenset("way possible want need please should would could get make use using".split())
_EXACT = re.compile(r"`([^`]{2,80})`|\"([^\"]{2,80})\"|(?<![\w.])(-{0,2}[A-Za-z_][\w.:/-]*[\w)]|\d+(?:\.\d+)+|\d{2,})")
_SPECIAL = re.compile(r"[_.:/()]|\d|[a-z][A-Z]|^[A-Z]{2,}$|^-")
_REFERRING = re.compile(r"(?:This|That|These|Those|It|They|Such|However|Otherwise|Then|Also)\b")
_MARKER = re.compile(r"(?<!\\)\[(?=\d{1,3}(?:\s*,\s*\d{1,3})*\])")
_TABLE_RULE = re.compile(r"\s*\|?[\s:|-]*-[\s:|-]*")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_CODE_FILE = re.compile(r"\S*[\w-]\.(py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|kts|c|h|cc|cpp|hpp|cs|rb|php|sh|"
                        r"bash|zsh|ps1|yaml|yml|toml|json|ini|cfg|conf|sql|swift|scala|lua|r|pl|ex|exs|hs|ml|vue|svelte|css|"
                        r"scss|html|xml|gradle|tf|proto)(?=$|\s)", re.IGNORECASE)
"""A repository file's title is its path."""
_LANGUAGES = {"py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
              "ts": "typescript", "tsx": "tsx", "jsx": "jsx", "rs": "rust", "rb": "ruby", "sh": "bash", "yml": "yaml",
              "kt": "kotlin", "kts": "kotlin", "cs": "csharp", "hs": "haskell", "ex": "elixir", "exs": "elixir",
              "pl": "perl", "h": "c", "hpp": "cpp", "cc": "cpp", "tf": "hcl", "cfg": "ini", "conf": "ini"}


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


def _key(block: Block) -> str:
    """What counts as the same passage: the words, whatever the spacing, case or markup."""
    return " ".join(re.sub(r"\W+", " ", block.text.casefold()).split())


def _seen(key: str, shown: set[str]) -> bool:
    """Shown already: the same words, or a long shown passage found whole inside it (a sentence merged with
    another, or a paragraph re-wrapped into one line)."""
    return key in shown or any(len(old) >= LONG_KEY and old in key for old in shown)


class _Scorer:
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
        covered = frozenset().union(*(self._terms.get(b, frozenset()) for b in blocks))
        hits = len(frozenset().union(*(self._hits.get(b, frozenset()) for b in blocks)))
        if blocks[0] in self.firsts:
            hits += self._named.get(blocks[0].heading, 0)
        heading = sum(self.weights.get(t, 0.0) for t in _stems(blocks[0].heading))
        return sum(self.weights.get(t, 0.0) for t in covered) + self.exact_weight * hits \
            + HEADING_WEIGHT * heading + DENSITY_WEIGHT * sum(self.base(b) for b in blocks) \
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
    return [re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])", re.IGNORECASE) for name in list(names)[:8]]


@dataclass(frozen=True)
class _Window:
    start: int
    end: int
    score: float


def _best_window(blocks: Sequence[Block], scorer: _Scorer, shown: set[str]) -> _Window | None:
    """The best run of consecutive blocks of one section (at most SENTENCES_PER_CONTEXT sentences or items and
    one code block), none of them shown already; ties go to the earliest, shortest run."""
    best: _Window | None = None
    for start, first in enumerate(blocks):
        if first not in scorer.firsts and scorer.defines(first):
            continue
        texts, codes, keys = 0, 0, set()
        for end in range(start, len(blocks)):
            block = blocks[end]
            key = _key(block)
            if block.section != first.section or _seen(key, shown) or key in keys:
                break
            keys.add(key)
            codes, texts = (codes + 1, texts) if _is_code(block) else (codes, texts + 1)
            if texts > SENTENCES_PER_CONTEXT or codes > 1:
                break
            score = scorer.window(blocks[start : end + 1])
            if best is None or score > best.score + 1e-9:
                best = _Window(start, end, score)
    return best


def _choose(blocks: Sequence[Block], scorer: _Scorer, shown: set[str]) -> list[Block]:
    """What a context shows: its best window, with the sentence it builds on and the code or list it
    introduces; nothing when its best window was shown already (by an earlier context)."""
    unseen = _best_window(blocks, scorer, set())
    if unseen is None or all(_seen(_key(b), shown) for b in blocks[unseen.start : unseen.end + 1]):
        return []
    window = _best_window(blocks, scorer, shown)
    if window is None:
        return []
    start, end = window.start, window.end

    def inside(i: int) -> bool:
        return 0 <= i < len(blocks) and blocks[i].section == blocks[start].section

    def free(i: int) -> bool:
        return inside(i) and not _seen(_key(blocks[i]), shown)

    first, last = blocks[start], blocks[end]
    if free(start - 1) and not _is_code(blocks[start - 1]) and (
            _is_code(first) or (_REFERRING.match(first.text) and blocks[start - 1].paragraph == first.paragraph)):
        start -= 1  # the sentence that introduces the code, or that "This"/"It" refers to
    has_code = any(_is_code(b) for b in blocks[start : end + 1])
    if free(end + 1) and not has_code and _is_code(blocks[end + 1]):
        end += 1  # the code or command right after the sentences belongs to them
    elif last.introduces:
        while free(end + 1) and blocks[end + 1].kind is BlockKind.ITEM and end - window.end < MAX_LIST_ITEMS:
            end += 1
    elif end == start and free(end + 1) and blocks[end + 1].paragraph == last.paragraph \
            and blocks[end + 1].kind is BlockKind.SENTENCE:
        end += 1  # one sentence alone: the next one of its paragraph usually completes it
    stop = _follow(blocks, start, end, free, inside)
    return [b for b in blocks[start : stop + 1] if not _seen(_key(b), shown)]


def _follow(blocks: Sequence[Block], start: int, end: int, free: Callable[[int], bool],
            inside: Callable[[int], bool]) -> int:
    """The window's end moved over what follows it in its section, over a sentence an earlier context showed
    (a definition often repeats the prose that cited it); `_fit` drops the farthest first."""
    size = sum(len(b.text) for b in blocks[start : end + 1])
    codes = sum(_is_code(b) for b in blocks[start : end + 1])
    while inside(end + 1) and size < FOLLOW_CHARS:
        if free(end + 1):
            if _is_code(blocks[end + 1]):
                if codes >= 2:
                    break
                codes += 1
            size += len(blocks[end + 1].text)
        end += 1
    return end


def _extracts(question: str, contexts: Sequence[AnswerContext]) -> Iterator[str]:
    """The excerpt of each context worth quoting, best context first, at most MAX_CONTEXTS, nothing twice."""
    candidates = list(contexts[:MAX_CANDIDATES])
    parsed = [_blocks(c) for c in candidates]
    scorer = _Scorer(question, [b for blocks in parsed for b in blocks])
    shown: set[str] = set()
    room, quoted = MAX_ANSWER_CHARS - len(NO_LLM_NOTICE), 0
    for position, (context, blocks) in enumerate(zip(candidates, parsed, strict=True)):
        chosen = _choose(blocks, scorer, shown)
        later = min(MAX_CONTEXTS - quoted, len(candidates) - position) - 1
        cap = min(MAX_EXCERPT_CHARS, room - MIN_EXCERPT_CHARS * later)
        text, quoted_blocks = _fit(context, chosen, scorer, cap) if chosen else ("", [])
        if not text:
            continue
        shown.update(_key(b) for b in quoted_blocks)
        room, quoted = room - len(text), quoted + 1
        yield text
        if quoted == MAX_CONTEXTS:
            return
    if quoted == 0 and candidates:
        yield _fallback(candidates[0])


def _blocks(context: AnswerContext) -> list[Block]:
    text = context.text[:MAX_CONTEXT_CHARS]  # contexts are a few chunks long; this only bounds the work
    code_file = _CODE_FILE.match(context.title)
    if code_file is None or mostly_prose(text):
        return segment(text)
    extension = code_file.group(1).lower()
    return segment(text, code=True, language=_LANGUAGES.get(extension, extension))


def _fit(context: AnswerContext, blocks: list[Block], scorer: _Scorer, cap: int) -> tuple[str, list[Block]]:
    """The excerpt in at most `cap` characters and the blocks it shows: first fewer sentences (the farthest from
    the best one), then shorter code, then the best block alone, cut at a word; ("", []) when nothing fits."""
    core = max(blocks, key=lambda b: (scorer.base(b), -blocks.index(b)))
    text = _render(context, blocks, scorer)
    while len(text) > cap:
        spare = [b for i, b in enumerate(blocks) if b is not core and not _is_code(b)
                 and not (i + 1 < len(blocks) and _is_code(blocks[i + 1]))]  # a code block keeps its introduction
        if not spare:
            break
        farthest = max(spare, key=lambda b: abs(blocks.index(b) - blocks.index(core)))
        blocks = [b for b in blocks if b is not farthest]
        text = _render(context, blocks, scorer)
    for lines in (12, 6):
        text = _render(context, blocks, scorer, lines=lines) if len(text) > cap else text
    chars = MAX_SENTENCE_CHARS
    while len(text) > cap and chars >= 80:
        chars -= max(20, len(text) - cap)
        blocks = [core]
        text = _render(context, blocks, scorer, lines=3, chars=chars)
    return (text, blocks) if len(text) <= cap else ("", [])


def _is_code(block: Block) -> bool:
    return block.kind in (BlockKind.CODE, BlockKind.TABLE)


def _render(context: AnswerContext, blocks: list[Block], scorer: _Scorer, *, lines: int = MAX_CODE_LINES,
            chars: int = MAX_SENTENCE_CHARS) -> str:
    """`**title** [n]`, the section's heading as a label, then the sentences quoted and the code fenced."""
    title = context.title or "Source"
    heading = " ".join(blocks[0].heading.replace("*", "").replace("`", "").split())[:120]
    label = f" · *{_escaped(heading)}*" if heading and heading.casefold() not in title.casefold() else ""
    parts: list[str] = []
    quote: list[str] = []
    for i, block in enumerate(blocks):
        if _is_code(block):
            parts.extend(["\n".join(quote)] if quote else [])
            parts.append(_code(block, scorer, lines))
            quote = []
            continue
        if quote and blocks[i - 1].paragraph != block.paragraph \
                and BlockKind.SENTENCE in (block.kind, blocks[i - 1].kind):
            quote.append(">")  # a new paragraph within the quote
        text = _clip(block.text, chars, scorer)
        if block.fragment:
            text = ("" if starts_sentence(text) else "…") + text + ("" if ends_sentence(text) else "…")
        quote.append(("> - " if block.kind is BlockKind.ITEM else "> ") + _escaped(text))
    parts.extend(["\n".join(quote)] if quote else [])
    return f"**{title}** [{context.number}]{label}\n" + "\n\n".join(parts) + "\n\n"


def _escaped(text: str) -> str:
    """Prose with its bracketed numbers escaped, so a source's own "[2]" is never taken for a citation."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_MARKER.sub(lambda _: "\\[", text[last : span.start()]), span.group(0)]
        last = span.end()
    return "".join(out) + _MARKER.sub(lambda _: "\\[", text[last:])


def _clip(text: str, limit: int, scorer: _Scorer) -> str:
    """The text, or its best-matching run of whole words within `limit` characters, marked with "…"."""
    if len(text) <= limit:
        return text
    words = text.split()
    weights = [scorer.words(w) for w in words]
    best, best_score, start, size, score = (0, 0), -1.0, 0, -1, 0.0
    for end, word in enumerate(words):
        size, score = size + len(word) + 1, score + weights[end]
        while size > limit - 2 and start < end:
            size, score, start = size - len(words[start]) - 1, score - weights[start], start + 1
        if score > best_score + 1e-9:
            best, best_score = (start, end + 1), score
    kept = " ".join(words[best[0] : best[1]])[: limit - 2]
    return ("…" if best[0] > 0 else "") + kept + ("…" if best[1] < len(words) else "")


def _code(block: Block, scorer: _Scorer, limit: int) -> str:
    """A fenced block of at most `limit` lines, or a markdown table with its header and its best rows."""
    lines = [line if len(line) <= MAX_CODE_LINE_CHARS else line[:MAX_CODE_LINE_CHARS].rstrip() + " …"
             for line in block.text.splitlines()]
    if block.kind is BlockKind.TABLE:
        if len(lines) > 2 and _TABLE_RULE.fullmatch(lines[1]):
            return "\n".join(lines[:2] + _best_lines(lines[2:], scorer, MAX_TABLE_ROWS, marks=False))
        limit = min(limit, MAX_TABLE_ROWS)
    body = "\n".join(_best_lines(lines, scorer, limit, marks=True))
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    language = re.sub(r"[^\w+#.-]", "", block.language)[:20]
    return f"{fence}{language}\n{body}\n{fence}"


def _best_lines(lines: list[str], scorer: _Scorer, limit: int, *, marks: bool) -> list[str]:
    """At most `limit` lines: all, or the best-matching run (with "…" lines where others were left out)."""
    if len(lines) <= limit:
        return lines
    size = max(1, limit - 2 if marks else limit)
    weights = [scorer.words(line) for line in lines]
    scores = [sum(weights[i : i + size]) for i in range(len(lines) - size + 1)]
    start = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return (["…"] if marks and start else []) + lines[start : start + size] \
        + (["…"] if marks and start + size < len(lines) else [])


def _fallback(context: AnswerContext) -> str:
    """When no context holds anything to quote (headings only, images): the best one, cited by its title."""
    return f"**{context.title or 'Source'}** [{context.number}]\n\n"


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
        yield TextDelta(NO_LLM_NOTICE)
        for excerpt in _extracts(request.question, request.contexts):
            if cancel is not None and cancel.cancelled:
                return
            yield TextDelta(excerpt)
        yield Usage(model=OFFLINE_MODEL, flow=Flow.ANSWER)

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> Completion:
        """An extract: whole sentences picked from the texts, in reading order, at most max_chars."""
        usage = Usage(model=OFFLINE_MODEL, flow=Flow.SUMMARIZE)
        if self.embedder is not None:
            embed = self.embedder.embed_documents
            return Completion(text=extractive_summary(texts, max_chars=max_chars, embed=embed), usage=usage)
        return Completion(text=frequent_sentences(texts, max_chars), usage=usage)
