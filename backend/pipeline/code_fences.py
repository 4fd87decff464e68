"""Fenced code blocks in markdown chunks: where they are, cuts that must not fall at a code comment, and chunks
that start inside a block saying so."""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*")
NO_BREAK_SPACE = "\u00a0"
"""Masks a code comment's space from the splitter: the same length, so the masked text maps back to the document
offset for offset; MiniLM's tokenizer reads it as a space, and no tokenizer counts it as fewer tokens than one,
so a piece that fits masked fits unmasked."""
_HEADING_LIKE = re.compile(r"#{1,6} ")


def closing_fence(mark: str) -> re.Pattern[str]:
    """The line that closes a fence opened with `mark`: the same character, at least as many of it."""
    return re.compile(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced block: its code runs from `start` to `end` (where the closing fence line starts, or the text's
    end when nothing closes it), opened by the line `opening`; its closing fence line ends at `closed` (None when
    nothing closes it)."""

    start: int
    end: int
    opening: str
    closed: int | None = None


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced code blocks of a markdown text, in order."""
    blocks: list[CodeBlock] = []
    closing: re.Pattern[str] | None = None
    opening, start, offset = "", 0, 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if closing is not None and closing.fullmatch(body):
            blocks.append(CodeBlock(start, offset, opening, offset + len(body)))
            closing = None
        elif closing is None and (fence := FENCE.fullmatch(body)):
            closing, opening, start = closing_fence(fence.group(1)), body.strip(), offset + len(line)
        offset += len(line)
    if closing is not None:
        blocks.append(CodeBlock(start, len(text), opening))
    return blocks


def open_fence(text: str) -> re.Pattern[str] | None:
    """The closing line of the fenced block `text` ends inside, or None when every fence it opens is closed."""
    closing: re.Pattern[str] | None = None
    for line in text.splitlines():
        if closing is not None:
            closing = None if closing.fullmatch(line) else closing
        elif fence := FENCE.fullmatch(line):
            closing = closing_fence(fence.group(1))
    return closing


def comments_masked(text: str, blocks: list[CodeBlock]) -> str:
    """`text` with the space after the leading hashes of its code lines made a no-break space.

    langchain's markdown splitter cuts first before every line that starts with hashes and a space, taking
    it for a heading; inside a fence it is a Python or shell comment, and a cut there left an example's tail
    as a chunk that read as a heading and loose prose (one markdown chunk in eight started inside code).
    """
    if not blocks:
        return text
    masked = list(text)
    for block in blocks:
        offset = block.start
        for line in text[block.start : block.end].splitlines(keepends=True):
            if found := _HEADING_LIKE.match(line):
                masked[offset + found.end() - 1] = NO_BREAK_SPACE
            offset += len(line)
    return "".join(masked)


def reopened(text: str, start: int, blocks: list[CodeBlock]) -> str:
    """A chunk of the document (`text`, from offset `start`) preceded by its block's opening fence when it
    starts inside that block, so it reads as code wherever it is read alone."""
    block = next((b for b in blocks if b.start <= start < b.end), None)
    if block is None or not text.strip():
        return text
    return f"{block.opening}\n{text}"


def fence_label(text: str) -> str:
    """The language a fence line opening `text` names ("python" for "```python"), or ""."""
    found = FENCE.fullmatch(text.partition("\n")[0])
    return found.group(2) if found else ""


def reopening(left: str, right: str) -> int:
    """Length of the fence line `right` starts with when `left`, the chunk before it, ends inside the code
    block that line reopens (see `reopened`); 0 otherwise."""
    first, newline, _ = right.partition("\n")
    if not newline or FENCE.fullmatch(first) is None or open_fence(left) is None:
        return 0
    return len(first) + 1
