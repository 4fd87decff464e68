"""Markdown as answers are written (CommonMark and GFM tables) to Slack's mrkdwn, in parts Slack accepts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from backend.channels.chat import fences
from backend.channels.chat.split import split_message

# Slack's limits (docs.slack.dev): a section block's text holds at most 3,000 characters; chat.startStream and
# chat.appendStream take at most 12,000 characters of markdown_text per call (that field takes markdown, not
# mrkdwn); chat.postMessage truncates a message's text past 40,000 characters.
SECTION_TEXT_LIMIT = 3000
STREAM_TEXT_LIMIT = 12000
MESSAGE_TEXT_LIMIT = 40000

RULE_LINE = "─" * 10
# Placeholders for spans already converted (private-use characters, removed from the input first).
_TOKEN_OPEN, _TOKEN_CLOSE, _BOLD_MARK = "\ue000", "\ue001", "\ue002"
_PRIVATE = re.compile("[\ue000-\ue002]")
_TOKEN = re.compile(f"{_TOKEN_OPEN}(\\d+){_TOKEN_CLOSE}")

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}(?:>[ \t]?)+(.*)$")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+")
_TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"  # ![alt] or [text], one level of nested brackets
    r"\(\s*(<[^<>\n]*>|(?:[^\s()<>]|\([^\s()<>]*\))+)"  # (target), with balanced parentheses inside
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"  # an optional "title"
)
_AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^\s<>]+)>", re.IGNORECASE)
_BARE_URL = re.compile(r"\bhttps?://[^\s<>]+", re.IGNORECASE)
_SAFE_TARGET = re.compile(r"(?:https?://|mailto:)\S", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_FENCE_RUN = re.compile(r"`{3,}")

_BOLD_ITALIC = re.compile(r"\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
# What a cut must not fall inside: a link or mention in <…> (only ours are left) and an escaped character.
_ATOMIC = re.compile(r"<[^<>\n]*>|&(?:amp|lt|gt);")


def to_mrkdwn(markdown: str) -> str:
    """Convert `markdown` to Slack mrkdwn; `&`, `<` and `>` are escaped everywhere but in the links made here."""
    lines = _PRIVATE.sub("", markdown.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    out: list[str] = []
    fence: fences.Fence | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if fence is not None:
            closed = fences.closes(line, fence)
            out.append("```" if closed else _code_line(line, fence))
            fence = None if closed else fence
        elif (opened := fences.opening(line)) is not None:
            out.append("```")  # Slack shows a language tag as the block's first line of text: it is dropped.
            fence = opened
        elif (end := _table_end(lines, index - 1)) > index - 1:
            out.extend(_table(lines[index - 1 : end]))
            index = end
        else:
            out.append(_block_line(line).rstrip())
    if fence is not None:
        out.append("```")  # An answer cut off inside a code block still shows a closed block.
    return "\n".join(out).strip("\n")


def slack_sections(markdown: str, limit: int = SECTION_TEXT_LIMIT) -> list[str]:
    """`markdown` as mrkdwn texts of at most `limit` characters, one per section block, code blocks closed."""
    return split_message(to_mrkdwn(markdown), limit, atomic=_ATOMIC)


def escape(text: str) -> str:
    """Slack's escaping: `&`, `<` and `>` as entities, so no text can form a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _break_fences(text: str) -> str:
    # Slack starts or ends a code block at any run of three backticks, even mid-line or inside a block; a
    # zero-width space between them keeps the text as it reads and the block structure as converted.
    return _FENCE_RUN.sub(lambda match: "\u200b".join(match.group()), text)


def _code_line(line: str, fence: fences.Fence) -> str:
    """A line inside a code block: the fence's indentation removed, nothing else but Slack's escaping."""
    indent = len(fence.indent)
    stripped = line[indent:] if line[:indent].strip() == "" else line.lstrip(" \t")
    return escape(_break_fences(stripped))


def _block_line(line: str) -> str:
    """One line outside code blocks and tables: heading, rule, quote, list item or paragraph text."""
    if (heading := _HEADING.match(line)) is not None:
        text = _BOLD.sub(lambda match: match.group(1) or match.group(2), heading.group(1) or "")
        return f"*{_inline(text)}*" if text.strip() else ""
    if _RULE.match(line):
        return RULE_LINE
    if (quote := _QUOTE.match(line)) is not None:
        return "> " + _block_line(quote.group(1))  # Slack has one level of quote; nested ones are merged.
    if (bullet := _BULLET.match(line)) is not None:
        indent, text = bullet.groups()
        if (task := _TASK.match(text)) is not None:
            text = ("☐ " if task.group(1) == " " else "☑ ") + text[task.end() :]
        return f"{indent}• {_inline(text)}"
    return _inline(line)


class _Vault:
    """Spans already converted, replaced by placeholder tokens so later passes leave them alone."""

    def __init__(self) -> None:
        self.saved: list[str] = []

    def keep(self, value: str) -> str:
        self.saved.append(value)
        return f"{_TOKEN_OPEN}{len(self.saved) - 1}{_TOKEN_CLOSE}"

    def restore(self, text: str) -> str:
        while _TOKEN.search(text):  # A link's text may hold a code span: tokens nest one level.
            text = _TOKEN.sub(lambda match: self.saved[int(match.group(1))], text)
        return text


def _inline(text: str) -> str:
    """Inline spans of one line: code first (kept as it is), then links and URLs, escaping, emphasis."""
    vault = _Vault()
    text = _CODE_SPAN.sub(lambda match: vault.keep(f"`{escape(match.group(2))}`"), text)
    text = _ESCAPED.sub(lambda match: vault.keep(escape(match.group(1))), text)
    text = _LINK.sub(lambda match: _link(match, vault.keep), text)
    text = _AUTOLINK.sub(lambda match: vault.keep(f"<{_target(match.group(1))}>"), text)
    text = _BARE_URL.sub(lambda match: _bare_url(match.group(), vault.keep), text)
    return vault.restore(_emphasis(escape(_break_fences(text))))


def _emphasis(text: str) -> str:
    """`**b**`/`__b__` to `*b*`, `*i*` to `_i_` (`_i_` is already Slack's), `~~s~~` to `~s~`."""
    text = _BOLD_ITALIC.sub(f"{_BOLD_MARK}_\\1_{_BOLD_MARK}", text)
    text = _BOLD.sub(lambda match: _BOLD_MARK + (match.group(1) or match.group(2)) + _BOLD_MARK, text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    return text.replace(_BOLD_MARK, "*")


def _link(match: re.Match[str], keep: Callable[[str], str]) -> str:
    """A markdown link or image as a Slack link; a target that is not http(s) or mailto leaves only the text."""
    label, target = match.group(2), match.group(3).strip("<>").strip()
    if not _SAFE_TARGET.match(target):
        return label  # Plain text: a javascript: or relative target is never made clickable.
    text = _emphasis(escape(_break_fences(label or target))).replace("|", "｜")
    return keep(f"<{_target(target)}|{text}>")


def _target(url: str) -> str:
    """A URL as the target of a Slack link: `&` escaped; `|` and spaces, which would end it, encoded."""
    return url.replace("&", "&amp;").replace("|", "%7C").replace(" ", "%20")


def _bare_url(url: str, keep: Callable[[str], str]) -> str:
    """A bare URL stays text (Slack links it); trailing punctuation is the sentence's, as GFM reads it."""
    trailing = ""
    while url and (url[-1] in ".,:;!?'\"*_~" or (url[-1] == ")" and url.count("(") < url.count(")"))):
        url, trailing = url[:-1], url[-1] + trailing
    return keep(escape(url)) + trailing


def _table_end(lines: list[str], start: int) -> int:
    """The index after the GFM table starting at `start`, or `start` if no table starts there."""
    if start + 1 >= len(lines) or "|" not in lines[start] or "|" not in lines[start + 1]:
        return start
    if not _TABLE_DELIMITER.match(lines[start + 1]):
        return start
    end = start + 2
    while end < len(lines) and "|" in lines[end] and lines[end].strip() and fences.opening(lines[end]) is None:
        end += 1
    return end


def _table(rows: list[str]) -> list[str]:
    """A GFM table as a code block with aligned columns (Slack has no tables; monospace keeps them readable)."""
    header, delimiter, body = _cells(rows[0]), _cells(rows[1]), [_cells(row) for row in rows[2:]]
    table = [[_plain(cell) for cell in row] for row in (header, *body)]
    columns = max(len(row) for row in table)
    table = [row + [""] * (columns - len(row)) for row in table]
    widths = [max(_width(row[column]) for row in table) for column in range(columns)]
    aligns = [_align(cell) for cell in delimiter] + ["left"] * columns
    lines = [" | ".join(_pad(cell, width, align) for cell, width, align in zip(row, widths, aligns, strict=False))
             for row in table]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return ["```", *(escape(_break_fences(line.rstrip())) for line in lines), "```"]


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
    vault = _Vault()
    text = _CODE_SPAN.sub(lambda match: vault.keep(match.group(2)), _BREAK.sub(" ", cell.strip()))
    text = _ESCAPED.sub(lambda match: vault.keep(match.group(1)), text)
    text = _LINK.sub(lambda match: _plain_link(match.group(2), match.group(3).strip("<>")), text)
    text = _BOLD_ITALIC.sub(r"\1", text)
    text = _BOLD.sub(lambda match: match.group(1) or match.group(2), text)
    text = _STRIKE.sub(r"\1", _ITALIC.sub(r"\1", text))
    return vault.restore(text)


def _plain_link(label: str, target: str) -> str:
    if not _SAFE_TARGET.match(target):
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
