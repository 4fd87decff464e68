"""Answer markdown read the same way for every chat: inline syntax, placeholders, bare URLs, GFM tables as text."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from backend.channels.chat import fences

# Placeholders for spans already converted (private-use characters, removed from the input first).
TOKEN_OPEN, TOKEN_CLOSE = "\ue000", "\ue001"
PRIVATE = re.compile("[\ue000-\ue00f]")  # the range the converters keep for their own marks
_TOKEN = re.compile(f"{TOKEN_OPEN}(\\d+){TOKEN_CLOSE}")

HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")

CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"  # ![alt] or [text], one level of nested brackets
    r"\(\s*(<[^<>\n]*>|(?:[^\s()<>]|\([^\s()<>]*\))+)"  # (target), with balanced parentheses inside
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"  # an optional "title"
)
AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^\s<>]+)>", re.IGNORECASE)
BARE_URL = re.compile(r"\bhttps?://[^\s<>]+", re.IGNORECASE)
SAFE_TARGET = re.compile(r"(?:https?://|mailto:)\S", re.IGNORECASE)
BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)

BOLD_ITALIC = re.compile(r"\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*")
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_FENCE_RUN = re.compile(r"`{3,}")


def convert_lines(markdown: str, *, fence_line: Callable[[str, fences.Fence, bool], str],
                  code_line: Callable[[str, fences.Fence], str], text_line: Callable[[str], str],
                  table: Callable[[list[str]], list[str]] | None) -> tuple[list[str], fences.Fence | None]:
    """`markdown` converted line by line, and the fence still open at its end.

    A fence's opening and closing lines go through `fence_line` (with closing True for the latter), the lines
    inside it through `code_line`, a GFM table's lines through `table` (None: tables are text) and every
    other line through `text_line`. Line breaks are normalised and placeholder characters removed first.
    """
    lines = PRIVATE.sub("", markdown.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    out: list[str] = []
    fence: fences.Fence | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if fence is not None:
            closed = fences.closes(line, fence)
            out.append(fence_line(line, fence, True) if closed else code_line(line, fence))
            fence = None if closed else fence
        elif (opened := fences.opening(line)) is not None:
            out.append(fence_line(line, opened, False))
            fence = opened
        elif table is not None and (end := table_end(lines, index - 1)) > index - 1:
            out.extend(table(lines[index - 1 : end]))
            index = end
        else:
            out.append(text_line(line))
    return out, fence


class Vault:
    """Spans already converted, replaced by placeholder tokens so later passes leave them alone."""

    def __init__(self) -> None:
        self.saved: list[str] = []

    def keep(self, value: str) -> str:
        self.saved.append(value)
        return f"{TOKEN_OPEN}{len(self.saved) - 1}{TOKEN_CLOSE}"

    def restore(self, text: str) -> str:
        while _TOKEN.search(text):  # A link's text may hold a code span: tokens nest one level.
            text = _TOKEN.sub(lambda match: self.saved[int(match.group(1))], text)
        return text


def break_fences(text: str) -> str:
    """`text` with a zero-width space between the backticks of every run of three or more.

    Slack and Discord start or end a code block at any run of three backticks, even mid-line or inside a block;
    broken up, the text reads the same and the block structure stays as converted.
    """
    return _FENCE_RUN.sub(lambda match: "\u200b".join(match.group()), text)


def trim_url(url: str) -> tuple[str, str]:
    """A bare URL less the punctuation that ends the sentence around it (as GFM reads it), and that punctuation."""
    trailing = ""
    while url and (url[-1] in ".,:;!?'\"*_~" or (url[-1] == ")" and url.count("(") < url.count(")"))):
        url, trailing = url[:-1], url[-1] + trailing
    return url, trailing


def table_end(lines: list[str], start: int) -> int:
    """The index after the GFM table starting at `start`, or `start` if no table starts there."""
    if start + 1 >= len(lines) or "|" not in lines[start] or "|" not in lines[start + 1]:
        return start
    if not TABLE_DELIMITER.match(lines[start + 1]):
        return start
    end = start + 2
    while end < len(lines) and "|" in lines[end] and lines[end].strip() and fences.opening(lines[end]) is None:
        end += 1
    return end


def aligned_table(rows: list[str]) -> list[str]:
    """A GFM table's lines (header, delimiter, body) as plain text lines with aligned columns, for monospace."""
    header, delimiter, body = _cells(rows[0]), _cells(rows[1]), [_cells(row) for row in rows[2:]]
    table = [[_plain(cell) for cell in row] for row in (header, *body)]
    columns = max(len(row) for row in table)
    table = [row + [""] * (columns - len(row)) for row in table]
    widths = [max(_width(row[column]) for row in table) for column in range(columns)]
    aligns = [_align(cell) for cell in delimiter] + ["left"] * columns
    lines = [" | ".join(_pad(cell, width, align) for cell, width, align in zip(row, widths, aligns, strict=False))
             for row in table]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return [line.rstrip() for line in lines]


def _cells(row: str) -> list[str]:
    """The cells of a table row: split at `|` outside code spans; `\\|` is a pipe inside a cell."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    cells, current, in_code, index = [], "", False, 0
    while index < len(row):
        char = row[index]
        if char == "\\" and row[index + 1 : index + 2] == "|":
            current, index = current + "|", index + 2
            continue
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(current)
            current = ""
        else:
            current += char
        index += 1
    return [*cells, current]


def _plain(cell: str) -> str:
    """A table cell as plain text for a code block: code spans unwrapped, links as `text (url)`, no emphasis."""
    vault = Vault()
    text = CODE_SPAN.sub(lambda match: vault.keep(match.group(2)), BREAK.sub(" ", cell.strip()))
    text = ESCAPED.sub(lambda match: vault.keep(match.group(1)), text)
    text = LINK.sub(lambda match: _plain_link(match.group(2), match.group(3).strip("<>")), text)
    text = BOLD_ITALIC.sub(r"\1", text)
    text = BOLD.sub(lambda match: match.group(1) or match.group(2), text)
    text = STRIKE.sub(r"\1", ITALIC.sub(r"\1", text))
    return vault.restore(text)


def _plain_link(label: str, target: str) -> str:
    if not SAFE_TARGET.match(target):
        return label
    return f"{label} ({target})" if label and label != target else target


def _align(delimiter: str) -> str:
    cell = delimiter.strip()
    if cell.startswith(":") and cell.endswith(":") and len(cell) > 1:
        return "center"
    return "right" if cell.endswith(":") else "left"


def _width(text: str) -> int:
    """Columns `text` takes in a monospace font: wide (CJK, most emoji) count two, combining marks none."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or char in "\u200b\u200d\ufe0e\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width


def _pad(text: str, width: int, align: str) -> str:
    space = width - _width(text)
    if align == "right":
        return " " * space + text
    if align == "center":
        return " " * (space // 2) + text + " " * (space - space // 2)
    return text + " " * space
