"""Split a long chat message into parts within a size limit, at natural breaks, never breaking a code fence."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from backend.channels.chat import fences
from backend.channels.chat.fences import Fence

# Below this a part could hold little more than the fence lines it may have to repeat.
MIN_LIMIT = 200
# Cut kinds, best first. A hard cut splits a word, which only happens to a word longer than a part.
BLANK, LINE, SPACE, HARD = 0, 1, 2, 3
_LEADING_BLANK_LINES = re.compile(r"^(?:[ \t]*\n)+")
_SPACES = re.compile(r"[ \t]+")
_JOINERS = frozenset("\u200d\ufe0e\ufe0f")


@dataclass(frozen=True)
class _Cut:
    """Where a part ends (`pos`), where the next one starts (`resume`) and the fence open at that point."""

    pos: int
    rank: int
    fence: Fence | None
    resume: int


def split_message(text: str, limit: int, atomic: re.Pattern[str] | None = None) -> list[str]:
    """Split `text` into non-empty parts of at most `limit` characters each.

    A part ends at a blank line if one is far enough in, else at a line break, else at a space; a word longer
    than a part is cut. A cut inside a fenced code block closes the fence at the end of the part and reopens
    it, with the same opening line, at the start of the next; those lines count in the limit. Only whitespace
    at the cuts is dropped. No cut falls strictly inside a match of `atomic` (a link, an entity) unless the
    match alone is longer than a part. Two cases cannot be helped: a fence marker wider than a quarter of the
    limit is neither closed nor reopened, and a run of backticks or tildes longer than a part, cut, leaves a
    fence line in the next part.
    """
    if limit < MIN_LIMIT:
        raise ValueError(f"limit must be at least {MIN_LIMIT} characters, got {limit}")
    parts: list[str] = []
    rest = _LEADING_BLANK_LINES.sub("", text).rstrip()
    fence: Fence | None = None
    while rest.strip():
        part, rest, fence = _take(rest, fence, limit, atomic)
        parts.append(part)
    return parts


def _take(rest: str, fence: Fence | None, limit: int,
          atomic: re.Pattern[str] | None) -> tuple[str, str, Fence | None]:
    """The next part, the text left after it and the fence open where it was cut."""
    prefix = _reopening(fence, limit)
    budget = limit - len(prefix)
    if len(rest) - len(rest.lstrip()) > budget // 2:
        rest = rest.lstrip()  # An indentation that would fill half a part is whitespace at a cut.
    end = fences.open_at_end(rest, fence)
    if len(rest) + len(_closing(end, limit)) <= budget:
        return prefix + rest + _closing(end, limit), "", None
    cut = _choose(rest, fence, budget, limit, atomic)
    head = rest[: cut.pos].rstrip()
    tail = _LEADING_BLANK_LINES.sub("", rest[cut.resume :])
    return prefix + head + _closing(cut.fence, limit), tail, cut.fence


def _reopening(fence: Fence | None, limit: int) -> str:
    """The line (with its newline) that reopens `fence` at the start of a part."""
    if fence is None or not _repeatable(fence, limit):
        return ""
    # An info string long enough to crowd the part out is dropped; the marker alone still reopens the block.
    line = fence.line if len(fence.line) <= limit // 4 else fence.indent + fence.closer
    return line + "\n"


def _closing(fence: Fence | None, limit: int) -> str:
    """The line (with the newline before it) that closes `fence` at the end of a part."""
    return "\n" + fence.closer if fence is not None and _repeatable(fence, limit) else ""


def _repeatable(fence: Fence, limit: int) -> bool:
    # A marker wider than a quarter of a part (fifty backticks and more) is left alone rather than repeated.
    return len(fence.indent) + fence.width <= limit // 4


def _choose(rest: str, fence: Fence | None, budget: int, limit: int, atomic: re.Pattern[str] | None) -> _Cut:
    """The best cut that fits: the latest of the best kind in the second half of the part, else the latest."""
    spans = _spans(rest, budget, atomic)
    first = len(rest) - len(rest.lstrip())

    def fits(cut: _Cut) -> bool:
        if cut.pos <= first or any(start < cut.pos < stop for start, stop in spans):
            return False
        room = budget - len(_closing(cut.fence, limit))
        return cut.pos <= room or len(rest[: cut.pos].rstrip()) <= room

    fitting = [cut for cut in _candidates(rest, fence, budget) if fits(cut)]
    for rank in (BLANK, LINE, SPACE):
        ranked = [cut.pos for cut in fitting if cut.rank == rank and cut.pos >= budget // 2]
        if ranked:
            return next(cut for cut in fitting if cut.rank == rank and cut.pos == max(ranked))
    if fitting:
        return max(fitting, key=lambda cut: (cut.pos, -cut.rank))
    return _hard_cut(rest, fence, budget, limit, spans)


def _spans(rest: str, budget: int, atomic: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """The matches of `atomic` that start within the part (they may reach past it)."""
    spans: list[tuple[int, int]] = []
    for match in atomic.finditer(rest) if atomic is not None else ():
        if match.start() > budget:
            break
        spans.append(match.span())
    return spans


def _candidates(rest: str, fence: Fence | None, budget: int) -> Iterator[_Cut]:
    """Every line break and space up to a little past `budget`, with the fence open there."""
    lines = rest.split("\n")
    offset, state = 0, fence
    for index, line in enumerate(lines):
        if offset > budget:
            return
        delimiter = fences.is_delimiter(line, state)
        if not delimiter:
            yield from _space_cuts(line, offset, state)
        following = fences.after(line, state)
        end = offset + len(line)
        # Never right after an opening fence: the part would end with an empty block.
        if index + 1 < len(lines) and not (delimiter and state is None):
            blank = not line.strip() or not lines[index + 1].strip()
            yield _Cut(end, BLANK if blank else LINE, following, end + 1)
        offset, state = end + 1, following


def _space_cuts(line: str, offset: int, fence: Fence | None) -> Iterator[_Cut]:
    """The spaces inside `line` where it can be cut without either half reading as a fence line."""
    for match in _SPACES.finditer(line):
        start, stop = match.span()
        if start == 0 or stop == len(line):
            continue  # Indentation or trailing blanks: cutting there is cutting at the line break.
        if fences.is_delimiter(line[:start], fence) or fences.is_delimiter(line[stop:], fence):
            continue
        yield _Cut(offset + start, SPACE, fence, offset + stop)


def _hard_cut(rest: str, fence: Fence | None, budget: int, limit: int, spans: list[tuple[int, int]]) -> _Cut:
    """Cut inside the line that reaches past the part (a word longer than a part)."""
    offset, state = 0, fence
    room = budget
    for line in rest.split("\n"):
        room = budget - len(_closing(state, limit))
        if offset + len(line) > room:
            break
        offset, state = offset + len(line) + 1, fences.after(line, state)
    pos = max(1, room)
    for start, stop in spans:
        if start < pos < stop and start > offset:
            pos = start
    while pos > offset + 1 and _joined(rest, pos):
        pos -= 1
    return _Cut(pos, HARD, state, pos)


def _joined(text: str, pos: int) -> bool:
    """Whether a cut before `text[pos]` would split a character from its combining mark or emoji joiner."""
    return (pos < len(text) and (unicodedata.combining(text[pos]) > 0 or text[pos] in _JOINERS)) or (
        text[pos - 1] == "\u200d")
