"""HTML blocks inside markdown, as their reader sees them: a `<table>` as a markdown table, `<code>` as a code span,
a list item as "- ", the rest as its text (Node.js's constant tables, a README's centred logo and badges)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

BLOCK_START = re.compile(r" {0,3}<(?:table|div|p|details|summary|dl|dt|dd|ul|ol|li|h[1-6]|center|blockquote|pre"
                         r"|section|article|figure|img|picture|br|hr)(?=[\s/>]|$)", re.IGNORECASE)
"""A line opening an HTML block (CommonMark's block tags, which end at a blank line)."""
_TAGS_ONLY = re.compile(r"\s*(?:<\u200b?/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>\s*)+")


def renders_nothing(line: str) -> bool:
    """A line of HTML tags with no text between them (`<a id="ERR_X"></a>` before each of Node.js's error headings,
    `<a name="…"></a>` in READMEs), also as the neutraliser writes tags ("<\u200ba …>"): a reader sees nothing of it.
    An autolink (`<https://…>`, `<me@example.com>`) is no tag."""
    return _TAGS_ONLY.fullmatch(line) is not None


_BREAKS = frozenset({"p", "div", "br", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "ul", "ol", "dl", "dt",
                     "dd", "details", "summary", "center", "blockquote", "section", "article", "figure", "hr"})
_SKIPPED = frozenset({"script", "style", "svg"})
MAX_CELL_CHARS = 300


class _Reader(HTMLParser):
    """Collects the visible text of an HTML fragment as markdown lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line: list[str] = []
        self.rows: list[list[str]] | None = None  # the open table's rows
        self.cell: list[str] | None = None
        self.skipping = 0
        self.pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag == "table":
            self._break()
            self.rows = []
        elif tag == "tr" and self.rows is not None:
            self.rows.append([])
        elif tag in ("td", "th") and self.rows is not None:
            self.cell = []
        elif tag == "code" and not self.pre:
            self._text("`")
        elif tag == "pre":
            self._break()
            self.pre = True
            self.lines.append("```")
        elif tag == "li":
            self._break()
            self._text("- ")
        elif tag == "img":
            self._text(dict(attrs).get("alt") or "")
        elif tag in _BREAKS:
            self._break()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in ("td", "th") and self.rows is not None and self.cell is not None:
            if not self.rows:
                self.rows.append([])  # a cell outside any <tr>
            self.rows[-1].append(" ".join("".join(self.cell).split()).replace("|", "\\|")[:MAX_CELL_CHARS])
            self.cell = None
        elif tag == "table" and self.rows is not None:
            self._table(self.rows)
            self.rows = None
        elif tag == "code" and not self.pre:
            self._text("`")
        elif tag == "pre":
            self._break()
            self.lines.append("```")
            self.pre = False
        elif tag in _BREAKS or tag == "li":
            self._break()

    def handle_data(self, data: str) -> None:
        if self.pre and not self.skipping:
            self.lines.extend(data.strip("\n").splitlines())
        elif not self.skipping:
            self._text(data)

    def _text(self, text: str) -> None:
        (self.cell if self.cell is not None else self.line).append(text)

    def _break(self) -> None:
        text = " ".join("".join(self.line).split())
        if text:
            self.lines.append(text)
        self.line = []

    def _table(self, rows: list[list[str]]) -> None:
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        width = max(len(row) for row in rows)
        padded = [row + [""] * (width - len(row)) for row in rows]
        self.lines += ["", "| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
        self.lines += ["| " + " | ".join(row) + " |" for row in padded[1:]]
        self.lines.append("")

    def result(self) -> list[str]:
        self._break()
        return self.lines


def html_block_markdown(html: str) -> str:
    """The markdown a reader sees for an HTML block: tables as tables, code spans kept, tags and attributes gone."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    lines: list[str] = []
    for line in reader.result():
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip("\n")
