"""Split documents into chunks that fit the embedder's window, with locators for deep-link citations.

Chunk length is measured in the embedder's own tokens (not characters), so a chunk can never be
longer than what the model reads: nothing is silently truncated out of the dense index.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from backend.pipeline.code_fences import CodeBlock, code_blocks, comments_masked, reopened
from backend.pipeline.ingest_types import ContentType, Document, Segment
from backend.pipeline.sanitize import neutralise_line, neutralise_with_offsets
from backend.pipeline.visible import visible_markdown

if TYPE_CHECKING:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

TokenCounter = Callable[[str], int]
# Chunks larger than this retrieve worse even for long-window embedders, and cost more prompt tokens.
MAX_USEFUL_CHUNK_TOKENS = 512
SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places of the window
FENCE_RESERVE_TOKENS = 8
"""Kept free in the chunks of a markdown document with fenced code for the closing fences moved back to them."""
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


@dataclass(frozen=True)
class ChunkingConfig:
    """Sizes in embedder tokens; `min_chars` drops fragments too short to carry meaning."""

    max_tokens: int
    overlap_tokens: int
    min_chars: int = 20

    def __post_init__(self) -> None:
        if self.max_tokens < 16 or not 0 <= self.overlap_tokens < self.max_tokens // 2:
            raise ValueError(f"unusable chunking sizes: {self.max_tokens} tokens, overlap {self.overlap_tokens}")


def default_chunking(*, embedder_max_tokens: int) -> ChunkingConfig:
    """The largest chunk the embedder reads whole (capped at 512 tokens), with 12 % overlap."""
    size = min(embedder_max_tokens - SPECIAL_TOKENS, MAX_USEFUL_CHUNK_TOKENS)
    return ChunkingConfig(max_tokens=size, overlap_tokens=size * 12 // 100)


@dataclass(frozen=True)
class TextChunk:
    """A piece of a document: its text, where it starts in the document and how to cite it. The text is the
    document's from `start`, except that a markdown chunk starting inside a fenced code block begins with that
    block's opening fence line (see code_fences.reopened)."""

    index: int
    text: str
    start: int
    locator: dict[str, Any] = field(default_factory=dict)


def _splitter(doc: Document, config: ChunkingConfig, count_tokens: TokenCounter) -> RecursiveCharacterTextSplitter:
    # Imported here: langchain costs every process that loads the project 0.3 s at start, and only ingestion splits.
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    fenced = doc.content_type is ContentType.MARKDOWN and _FENCED.search(doc.text) is not None
    options: dict[str, Any] = {
        "chunk_size": config.max_tokens - (FENCE_RESERVE_TOKENS if fenced else 0),
        "chunk_overlap": config.overlap_tokens,
        "length_function": count_tokens,
    }
    language = {ContentType.MARKDOWN: Language.MARKDOWN.value}.get(doc.content_type, doc.language)
    if language in {member.value for member in Language}:
        return RecursiveCharacterTextSplitter.from_language(Language(language), **options)
    return RecursiveCharacterTextSplitter(**options)


def _locator(doc: Document, text: str, start: int) -> dict[str, Any]:
    locator: dict[str, Any] = {}
    if doc.page is not None:
        locator["page"] = doc.page
    if doc.segments:
        started = [s.seconds for s in doc.segments if s.offset <= start]
        locator["seconds"] = int(started[-1] if started else doc.segments[0].seconds)
    if doc.content_type is ContentType.CODE:
        first = doc.text.count("\n", 0, start) + 1
        locator["line_start"] = first
        locator["line_end"] = first + text.rstrip("\n").count("\n")
    return locator


def neutralised(doc: Document) -> Document:
    """The document with HTML tags and script links in its text and title made inert (see pipeline.sanitize).

    Source code is left as it is: it reaches only the model's prompt, whose output is neutralised itself.
    """
    if doc.content_type is ContentType.CODE:
        return replace(doc, title=neutralise_line(doc.title))
    text, offsets = neutralise_with_offsets(doc.text, [s.offset for s in doc.segments])
    segments = tuple(Segment(offset, s.seconds) for offset, s in zip(offsets, doc.segments, strict=True))
    return replace(doc, text=text, title=neutralise_line(doc.title), segments=segments)


def split_document(doc: Document, config: ChunkingConfig, count_tokens: TokenCounter) -> list[TextChunk]:
    """Chunks in order; each at most config.max_tokens tokens long by `count_tokens`; neutralised text."""
    if doc.content_type is ContentType.MARKDOWN and not doc.segments:
        doc = replace(doc, text=visible_markdown(doc.text))
    if not doc.text.strip():
        return []
    doc = neutralised(doc)
    blocks = code_blocks(doc.text) if doc.content_type is ContentType.MARKDOWN else []
    masked = comments_masked(doc.text, blocks)
    pieces = _splitter(doc, config, count_tokens).split_text(masked)
    chunks: list[TextChunk] = []
    previous = -1
    for piece in pieces:
        # langchain's add_start_index assumes the overlap is in characters; ours is in tokens, so
        # locate each chunk ourselves: chunks come in order, each starting after the previous one.
        start = masked.find(piece, previous + 1)
        start = masked.find(piece) if start < 0 else start
        previous = max(start, previous)
        text = doc.text[start : start + len(piece)] if start >= 0 else piece
        if len(text.strip()) < config.min_chars and len(pieces) > 1:
            continue
        text, start = _indented(doc.text, text, start, config, count_tokens)
        chunks.append(TextChunk(index=len(chunks), text=text, start=start, locator=_locator(doc, text, start)))
    if doc.content_type is not ContentType.MARKDOWN:
        return chunks  # only markdown's separators cut before fences (reST underlines may look like one)
    closed = _fences_closed(doc.text, chunks, blocks, config, count_tokens)
    return [replace(c, index=i, text=_reopened(c, blocks, config, count_tokens), locator=_locator(doc, c.text, c.start))
            for i, c in enumerate(closed)]


def _reopened(chunk: TextChunk, blocks: list[CodeBlock], config: ChunkingConfig, count_tokens: TokenCounter) -> str:
    """The chunk's text, behind its code block's opening fence when it starts inside one and that still fits."""
    text = reopened(chunk.text, chunk.start, blocks)
    return text if text == chunk.text or count_tokens(text) <= config.max_tokens else chunk.text


def _fences_closed(document: str, chunks: list[TextChunk], blocks: list[CodeBlock], config: ChunkingConfig,
                   count_tokens: TokenCounter) -> list[TextChunk]:
    """Chunks whose code blocks close where they end: langchain's markdown splitter cuts before "```\n", so a
    block's closing fence would start the next chunk, or make a chunk of its own that is dropped as too short,
    turning prose into code for whoever reads a chunk alone (a prompt, a summary). The fence moves back to the
    chunk holding the code, when it fits."""
    closes = {block.end: block.closed for block in blocks if block.closed is not None}
    if not closes:
        return chunks
    done: list[TextChunk] = []
    for chunk in chunks:
        following: TextChunk | None = chunk
        if done:
            done[-1], following = _closed(document, closes, done[-1], chunk, config, count_tokens)
        if following is not None:
            done.append(following)
    if done:
        done[-1], _ = _closed(document, closes, done[-1], None, config, count_tokens)
    return done


def _closed(document: str, closes: dict[int, int], previous: TextChunk, chunk: TextChunk | None,
            config: ChunkingConfig, count_tokens: TokenCounter) -> tuple[TextChunk, TextChunk | None]:
    """`previous` extended to the fence closing its code when that fence comes right after it (before `chunk`
    or at its start), and `chunk` from after that fence (None when nothing of it is left)."""
    tail = previous.start + len(previous.text)
    fence = len(document) - len(document[tail:].lstrip())
    end = closes.get(fence)
    if end is None or document[previous.start : tail] != previous.text \
            or count_tokens(document[previous.start : end]) > config.max_tokens:
        return previous, chunk
    if chunk is not None:
        chunk_end = chunk.start + len(chunk.text)
        if document[chunk.start : chunk_end] != chunk.text or fence < chunk.start < end:
            return previous, chunk
        if chunk.start <= fence:  # what it holds before the fence is blank or repeats the end of `previous`
            rest = document[end:chunk_end]
            chunk = replace(chunk, text=rest.strip(), start=chunk_end - len(rest.lstrip())) if rest.strip() else None
    return replace(previous, text=document[previous.start : end]), chunk


def _indented(document: str, text: str, start: int, config: ChunkingConfig,
              count_tokens: TokenCounter) -> tuple[str, int]:
    """The chunk with the indentation of its first line, which the splitter strips: a chunk that starts inside
    an indented block (a reST literal, a nested list, Python code) must still read as one."""
    if start <= 0:
        return text, start
    line_start = document.rfind("\n", 0, start) + 1
    indent = document[line_start:start]
    if not indent or indent.strip() or count_tokens(indent + text) > config.max_tokens:
        return text, start
    return indent + text, line_start


def chunk_id(*, source_id: int, generation: int, doc_key: str, version: str, index: int) -> str:
    """Deterministic: re-running the same work upserts the same rows instead of duplicating them."""
    digest = hashlib.sha1(f"{doc_key}\x00{version}".encode()).hexdigest()[:16]
    return f"s{source_id}-g{generation}-{digest}-{index}"


_CHUNK_ID = re.compile(r"(s\d+-g\d+-[0-9a-f]{16}-)(\d+)")


def next_chunk_id(chunk_id: str) -> str | None:
    """The id `chunk_id` would give the next chunk of the same document; None for an id it did not make."""
    found = _CHUNK_ID.fullmatch(chunk_id)
    return f"{found.group(1)}{int(found.group(2)) + 1}" if found else None
