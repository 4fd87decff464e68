"""Running headers, footers and page numbers of a paged document (a PDF's text, page by page): they repeat on
every page, so a passage that crosses one reads "… the DER encoding. Chapter 4: Function reference 19 asn1 …",
and every page's first chunk holds the same words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

MIN_PAGES = 3
"""A line is furniture when it recurs at the same edge of at least this many pages …"""
MIN_SHARE = 0.1
"""… and of at least this share of the pages (a document's own repeated phrases are rarely at a page's edge)."""
MAX_LINE_CHARS = 100
EDGE_ROUNDS = 2  # a header of two lines ("Manual title", then "Chapter 3")
_NUMBER_AT_END = re.compile(r"(?:^|\s)(\d{1,5})\s*$")
_ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"  # a well-formed one: not "mild"
_PAGE_LABEL = re.compile(rf"(?:page\s+)?(?:\d{{1,5}}|{_ROMAN})(?:\s*(?:/|of)\s*\d{{1,5}})?|[-–—]\s*\d{{1,5}}\s*[-–—]",
                         re.IGNORECASE)


def _shape(line: str) -> str:
    """The line as compared across pages: spacing and case aside. Numbers stay: pages of one template ("Step 4:
    open the valve.") differ only in them, and a running head with the page number is found by its number."""
    return " ".join(line.split()).casefold()


def _edges(lines: list[str]) -> tuple[int, int]:
    """The index of a page's first and last non-blank line (-1, -1 when it has none)."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return (filled[0], filled[-1]) if filled else (-1, -1)


def _page_offset(edge_lines: Sequence[tuple[str, ...]]) -> int | None:
    """Physical page minus printed page number, when the pages' edge lines end with numbers that agree on one
    (page 12 printed "9", page 13 "10" …) on at least MIN_PAGES pages; else None."""
    offsets: Counter[int] = Counter()
    for index, lines in enumerate(edge_lines):
        for line in set(lines):
            found = _NUMBER_AT_END.search(line)
            if found and len(line) <= MAX_LINE_CHARS:
                offsets[index + 1 - int(found.group(1))] += 1
    if not offsets:
        return None
    offset, count = offsets.most_common(1)[0]
    return offset if count >= MIN_PAGES else None


def _furniture(line: str, number: int, offset: int | None, repeated: set[str]) -> bool:
    """Whether one edge line of page `number` is furniture: a bare page label, a line ending with the page's
    printed number, or a line recurring as it is at that edge of many pages."""
    text = line.strip()
    if len(text) > MAX_LINE_CHARS:
        return False
    if _PAGE_LABEL.fullmatch(text):
        return True
    found = _NUMBER_AT_END.search(text)
    if offset is not None and found and int(found.group(1)) == number - offset:
        return True
    return _shape(text) in repeated


def _repeated(edge_lines: Sequence[tuple[str, ...]], side: int) -> set[str]:
    """The lines at one edge (0 top, 1 bottom) that recur on enough pages to be furniture."""
    shapes = Counter(_shape(lines[side]) for lines in edge_lines if lines)
    needed = max(MIN_PAGES, MIN_SHARE * len(edge_lines))
    return {shape for shape, count in shapes.items() if count >= needed}


def strip_furniture(texts: Sequence[str]) -> list[str]:
    """Each page's text without its running header and footer lines and its page number (pages in order, the
    first being page 1); a document of fewer than MIN_PAGES pages is returned as it is."""
    pages = [text.split("\n") for text in texts]
    if len(pages) < MIN_PAGES:
        return list(texts)
    for _ in range(EDGE_ROUNDS):
        edges = [_edges(lines) for lines in pages]
        edge_lines = [tuple(lines[i] for i in edge) if edge[0] >= 0 else ()
                      for lines, edge in zip(pages, edges, strict=True)]
        offset = _page_offset(edge_lines)
        repeated = (_repeated(edge_lines, 0), _repeated(edge_lines, 1))
        for index, (lines, edge) in enumerate(zip(pages, edges, strict=True)):
            # The first page's first line is the document's title, which running heads repeat: it stays.
            drop = {at for side, at in enumerate(edge) if at >= 0 and _furniture(
                lines[at], index + 1, offset, set() if (index, side) == (0, 0) else repeated[side])}
            pages[index] = [line for i, line in enumerate(lines) if i not in drop]
    return ["\n".join(lines).strip() for lines in pages]
