"""Fenced code blocks line by line: which line opens a fence, which one closes it, how to reopen it."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Any indentation counts (CommonMark stops at three spaces): answers put fences inside list items, and
# Slack and Discord treat an indented fence as a fence too, so a splitter that missed one would break it.
FENCE_LINE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Fence:
    """An open fenced code block: its opening line as written, its marker character and width."""

    line: str
    char: str
    width: int

    @property
    def indent(self) -> str:
        return self.line[: len(self.line) - len(self.line.lstrip(" \t"))]

    @property
    def info(self) -> str:
        """The info string after the marker: the language tag and anything after it."""
        return self.line.lstrip(" \t")[self.width :].strip()

    @property
    def closer(self) -> str:
        return self.char * self.width


def opening(line: str) -> Fence | None:
    """The fence `line` opens when read outside a code block, or None if it is not an opening fence."""
    match = FENCE_LINE.match(line)
    if match is None:
        return None
    marker, info = match.group(2), match.group(3)
    if marker[0] == "`" and "`" in info:
        return None  # CommonMark: a backtick fence's info string has no backtick (it is inline code then).
    return Fence(line.rstrip(), marker[0], len(marker))


def closes(line: str, fence: Fence) -> bool:
    """Whether `line` closes `fence`: the same character, at least as wide, nothing after it."""
    match = FENCE_LINE.match(line)
    return (match is not None and match.group(2)[0] == fence.char and len(match.group(2)) >= fence.width
            and not match.group(3).strip())


def after(line: str, fence: Fence | None) -> Fence | None:
    """The open fence after reading `line`, given the one open before it (None: outside any)."""
    if fence is None:
        return opening(line)
    return None if closes(line, fence) else fence


def is_delimiter(line: str, fence: Fence | None) -> bool:
    """Whether `line` opens (outside a block) or closes (inside `fence`) a code block."""
    return opening(line) is not None if fence is None else closes(line, fence)


def open_at_end(text: str, fence: Fence | None = None) -> Fence | None:
    """The fence still open at the end of `text`, read from a state where `fence` is open."""
    for line in text.split("\n"):
        fence = after(line, fence)
    return fence
