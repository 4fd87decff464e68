"""Citation markers in an answer: found where the renderers draw them, renumbered in order of first citation."""

from __future__ import annotations

import re
from collections.abc import Sequence

# The same marker and code rules as frontend/static/js/markdown*.js: "[2]" or "[1, 3]" not followed by "(",
# never inside a fenced block or a code span; a marker naming any unknown number is plain text there too.
_MARKER = re.compile(r"\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\]")
_PARTIAL_MARKER = re.compile(r"\[(?:\d{1,3}(?:[ \t]*,[ \t]*\d{0,3})*[ \t]*)?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*[^\s`]*[^`]*")
_FENCE_PREFIX = re.compile(r" {0,3}(?:`{1,2}|~{1,2})?")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_PLAIN = re.compile(r"[^\n\\`\[]+")
_DIGITS = re.compile(r"\d+")


class CitationRenumberer:
    """Rewrites the markers of a streamed answer so that the sources it cites are [1]..[k] in order of first
    citation; the rest of the text passes unchanged.

    A marker's new number is known the moment the marker is complete (first cited, first numbered), so the
    text can be rewritten as it streams; only what the next delta could still change is held back: a partial
    marker, a code span not closed yet, or a line that may open or close a code fence. `order` lists the
    original numbers in the order they were first cited.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.order: list[int] = []
        self._held = ""
        self._fence: tuple[str, int] | None = None  # the open fence's character and length
        self._line_start = True
        self.markers: list[tuple[int, int, list[int]]] = []
        """(start, end, original numbers) of every marker found, as offsets into all the text fed."""
        self._offset = 0  # where the held text starts in all the text fed

    def feed(self, text: str) -> str:
        self._held += text
        return self._drain(final=False)

    def finish(self) -> str:
        """The rest, at the end of the text."""
        return self._drain(final=True)

    def number(self, original: int) -> int:
        """The new number of a cited original number (numbering it if this is its first citation)."""
        if original not in self.order:
            self.order.append(original)
        return self.order.index(original) + 1

    def _drain(self, *, final: bool) -> str:
        held, pos, out = self._held, 0, []
        while pos < len(held):
            step = self._line(held, pos, final) if self._line_start else self._inline(held, pos, final)
            if step is None:
                break
            piece, pos = step
            out.append(piece)
        self._held, self._offset = held[pos:], self._offset + pos
        return "".join(out)

    def _line(self, held: str, pos: int, final: bool) -> tuple[str, int] | None:
        """At a line start: a fence line (or any line inside a fence) goes out whole and unchanged."""
        end = held.find("\n", pos)
        line = held[pos:] if end < 0 else held[pos:end]
        if self._fence is None and end < 0 and not final and _FENCE_PREFIX.fullmatch(line):
            return None  # too short to tell whether it opens a fence
        if self._fence is None and not _FENCE.fullmatch(line):
            self._line_start = False
            return "", pos
        if end < 0 and not final:
            return None
        if self._fence is None:
            run = _FENCE.fullmatch(line).group(1)  # type: ignore[union-attr]  # matched just above
            self._fence = (run[0], len(run))
        elif re.fullmatch(rf" {{0,3}}{re.escape(self._fence[0])}{{{self._fence[1]},}}[ \t]*", line):
            self._fence = None
        stop = len(held) if end < 0 else end + 1
        return held[pos:stop], stop

    def _inline(self, held: str, pos: int, final: bool) -> tuple[str, int] | None:
        char = held[pos]
        if char == "\n":
            self._line_start = True
            return char, pos + 1
        if char == "\\":
            return (held[pos : pos + 2], pos + 2) if pos + 1 < len(held) or final else None
        if char == "`":
            return self._code_span(held, pos, final)
        if char == "[":
            return self._marker(held, pos, final)
        plain = _PLAIN.match(held, pos)
        assert plain is not None  # every other character is plain text
        return plain.group(0), plain.end()

    def _code_span(self, held: str, pos: int, final: bool) -> tuple[str, int] | None:
        run = len(held) - pos - len(held[pos:].lstrip("`"))
        if pos + run == len(held) and not final:
            return None  # the run may grow
        closing = re.compile(rf"(?<!`)`{{{run}}}(?!`)")
        close = closing.search(held, pos + run)
        blank = _BLANK_LINE.search(held, pos + run)
        if close is not None and (blank is None or close.start() < blank.start()):
            if close.end() == len(held) and not final:
                return None  # "``" might still become "```"
            return held[pos : close.end()], close.end()
        if blank is None and not final:
            return None  # the span may close later in this paragraph
        return held[pos : pos + run], pos + run  # never closed: the backticks are literal

    def _marker(self, held: str, pos: int, final: bool) -> tuple[str, int] | None:
        found = _MARKER.match(held, pos)
        if found is None:
            partial = _PARTIAL_MARKER.match(held, pos)
            if not final and partial is not None and partial.end() == len(held):
                return None
            return "[", pos + 1
        if found.end() == len(held) and not final:
            return None  # a "(" next would make it a link
        numbers = [int(n) for n in _DIGITS.findall(found.group(1))]
        if held.startswith("(", found.end()) or not all(1 <= n <= self.count for n in numbers):
            return "[", pos + 1
        self.markers.append((self._offset + pos, self._offset + found.end(), numbers))
        return _DIGITS.sub(lambda digits: str(self.number(int(digits.group(0)))), found.group(0)), found.end()


def renumber(text: str, count: int) -> tuple[str, list[int]]:
    """`text` with its markers renumbered, and the original numbers in order of first citation."""
    renumberer = CitationRenumberer(count)
    out = renumberer.feed(text) + renumberer.finish()
    return out, renumberer.order


def citations(text: str, count: int) -> list[tuple[int, int, list[int]]]:
    """(start, end, numbers) of each marker citing sources 1..count, where the renderers find one (not in code)."""
    renumberer = CitationRenumberer(count)
    renumberer.feed(text)
    renumberer.finish()
    return renumberer.markers


def arranged(order: Sequence[int], count: int) -> list[int]:
    """Original numbers as the new numbering lists them: the cited in citation order, then the rest in theirs."""
    cited = [n for n in order if 1 <= n <= count]
    return cited + [n for n in range(1, count + 1) if n not in cited]
