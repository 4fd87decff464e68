"""The offline answerer: used when no LLM is configured. It extracts, cites and says so; it never
pretends to be a language model."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
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
from backend.pipeline.extract_windows import Scorer, best_score, block_key, choose, further, is_code, lead_in
from backend.pipeline.extractive import extractive_summary, frequent_sentences
from backend.pipeline.llm_types import CancelToken, Completion, Flow, StreamEvent, TextDelta, Usage
from backend.pipeline.ports import Embedder
from backend.pipeline.text import ends_sentence, starts_sentence
from backend.pipeline.understanding import understand_by_rules

OFFLINE_MODEL = "offline-extractive"
NO_LLM_NOTICE = (
    "*No language model is configured for this OpenGuru, so this is not a generated answer: these are "
    "the passages from the sources that best match your question.*\n\n"
)
MAX_CONTEXTS = 3  # contexts quoted; one whose best passage was already quoted gives its place to the next
MAX_CANDIDATES = 8
MAX_CONTEXT_CHARS = 40_000
MAX_ANSWER_CHARS = 2500
MAX_EXCERPT_CHARS = 1400
MIN_EXCERPT_CHARS = 300  # kept free for each context still to come, so the first cannot take the whole answer
EXTRA_CHARS = 350  # kept free in a context's excerpt for its second passage, when it has one
MIN_FILL_CHARS = 250  # the answer's room left over, below which no further passage is looked for
FURTHER_SHARE = 0.5
"""A passage quoted in the answer's spare room matches the question at least this share as well as the answer's
best passage (below it, passages sharing one common word of the question padded small answers)."""
MAX_SENTENCE_CHARS = 600
MAX_CODE_LINES = 25
MAX_CODE_LINE_CHARS = 200
MAX_TABLE_ROWS = 8
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


@dataclass
class _Quote:
    """What one context shows: its first passage (`text`, of `first`) and what follows it apart (`rest`)."""

    context: AnswerContext
    blocks: list[Block]
    first: list[Block]
    text: str
    rest: str
    heading: str  # the heading of the last passage shown, so a further one is labelled only when it changes


def _extracts(question: str, contexts: Sequence[AnswerContext]) -> Iterator[str]:
    """The excerpt of each context worth quoting, best context first, at most MAX_CONTEXTS, nothing twice."""
    candidates = list(contexts[:MAX_CANDIDATES])
    parsed = [_blocks(c) for c in candidates]
    scorer = Scorer(question, [b for blocks in parsed for b in blocks])
    shown: set[str] = set()
    quotes, room = _quotes(candidates, parsed, scorer, shown)
    _fill(quotes, scorer, shown, room)
    yield from (quote.text + quote.rest for quote in quotes)
    if not quotes and candidates:
        yield _fallback(candidates[0])


def _quotes(candidates: list[AnswerContext], parsed: list[list[Block]], scorer: Scorer,
            shown: set[str]) -> tuple[list[_Quote], int]:
    """Each context's best passage (and a second one for what it lacks), in the room left for it; and the
    answer's room left over."""
    quotes: list[_Quote]
    room, quotes = MAX_ANSWER_CHARS - len(NO_LLM_NOTICE), []
    for position, (context, blocks) in enumerate(zip(candidates, parsed, strict=True)):
        chosen, extra = choose(blocks, scorer, shown)
        later = min(MAX_CONTEXTS - len(quotes), len(candidates) - position) - 1
        cap = min(MAX_EXCERPT_CHARS, room - MIN_EXCERPT_CHARS * later)
        reserve = EXTRA_CHARS if extra and cap - EXTRA_CHARS >= MIN_EXCERPT_CHARS else 0
        text, first = _fit(context, chosen, scorer, cap - reserve) if chosen else ("", [])
        if not text:
            continue
        more, more_blocks = _fit(context, extra, scorer, cap - len(text), after=first[0].heading) \
            if extra else ("", [])
        shown.update(block_key(b) for b in first + more_blocks)
        room -= len(text + more)
        quotes.append(_Quote(context, blocks, first, text, more, (first + more_blocks)[-1].heading))
        if len(quotes) == MAX_CONTEXTS:
            break
    return quotes, room


def _fill(quotes: list[_Quote], scorer: Scorer, shown: set[str], room: int) -> None:
    """The room the answer has left goes to the contexts quoted, best first: the paragraph each first passage
    builds on, then each one's next passages that match the question at least FURTHER_SHARE as well as the
    answer's best (the answer often sits a paragraph away from the words that matched the question)."""
    for quote in quotes:
        lead = lead_in(quote.blocks, quote.first[0], shown)
        text = _render(quote.context, lead + quote.first, scorer) if lead else ""
        if lead and len(text) - len(quote.text) <= room:
            room -= len(text) - len(quote.text)
            quote.text, quote.first = text, lead + quote.first
            shown.update(block_key(b) for b in lead)
    bar = FURTHER_SHARE * max((best_score(quote.blocks, scorer) for quote in quotes), default=0.0)
    for quote in quotes:
        while room >= MIN_FILL_CHARS and (more := further(quote.blocks, scorer, shown, bar)):
            text, blocks = _fit(quote.context, more, scorer, min(room, MAX_EXCERPT_CHARS), after=quote.heading)
            if not text:
                break
            quote.rest, quote.heading, room = quote.rest + text, blocks[-1].heading, room - len(text)
            shown.update(block_key(b) for b in blocks)


def _blocks(context: AnswerContext) -> list[Block]:
    text = context.text[:MAX_CONTEXT_CHARS]  # contexts are a few chunks long; this only bounds the work
    code_file = _CODE_FILE.match(context.title)
    if code_file is None or mostly_prose(text):
        return segment(text, whole=context.whole)
    extension = code_file.group(1).lower()
    return segment(text, code=True, language=_LANGUAGES.get(extension, extension))


def _fit(context: AnswerContext, blocks: list[Block], scorer: Scorer, cap: int, *,
         after: str | None = None) -> tuple[str, list[Block]]:
    """The excerpt in at most `cap` characters and the blocks it shows: first fewer sentences (the farthest from
    the best one), then shorter code, then the best block alone, cut at a word; ("", []) when nothing fits."""
    core = max(blocks, key=lambda b: (scorer.base(b), -blocks.index(b)))
    render = functools.partial(_render, context, after=after)
    text = render(blocks, scorer)
    while len(text) > cap:
        spare = [b for i, b in enumerate(blocks) if b is not core and not is_code(b)
                 and not (i + 1 < len(blocks) and is_code(blocks[i + 1]))]  # a code block keeps its introduction
        if not spare:
            break
        farthest = max(spare, key=lambda b: abs(blocks.index(b) - blocks.index(core)))
        blocks = [b for b in blocks if b is not farthest]
        text = render(blocks, scorer)
    for lines in (12, 6):
        text = render(blocks, scorer, lines=lines) if len(text) > cap else text
    chars = MAX_SENTENCE_CHARS
    while len(text) > cap and chars >= 80:
        chars -= max(20, len(text) - cap)
        blocks = [core]
        text = render(blocks, scorer, lines=3, chars=chars)
    return (text, blocks) if len(text) <= cap else ("", [])


def _render(context: AnswerContext, blocks: list[Block], scorer: Scorer, *, lines: int = MAX_CODE_LINES,
            chars: int = MAX_SENTENCE_CHARS, after: str | None = None) -> str:
    """`**title** [n]`, the section's heading as a label, then the sentences quoted and the code fenced; a
    second passage of the same context (`after` its first, under that heading) starts with "…" instead."""
    title = context.title or "Source"
    heading = " ".join(blocks[0].heading.replace("*", "").replace("`", "").split())[:120]
    label = f" · *{_escaped(heading)}*" if heading and heading.casefold() not in title.casefold() else ""
    parts: list[str] = []
    quote: list[str] = []
    for i, block in enumerate(blocks):
        if is_code(block):
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
    if after is not None:
        label = label if blocks[0].heading != after else ""
    head = f"**{title}** [{context.number}]{label}" if after is None else f"…{label}"
    return f"{head}\n" + "\n\n".join(parts) + "\n\n"


def _escaped(text: str) -> str:
    """Prose with its bracketed numbers escaped, so a source's own "[2]" is never taken for a citation."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_MARKER.sub(lambda _: "\\[", text[last : span.start()]), span.group(0)]
        last = span.end()
    return "".join(out) + _MARKER.sub(lambda _: "\\[", text[last:])


def _clip(text: str, limit: int, scorer: Scorer) -> str:
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


def _code(block: Block, scorer: Scorer, limit: int) -> str:
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


def _best_lines(lines: list[str], scorer: Scorer, limit: int, *, marks: bool) -> list[str]:
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
