"""What a reader of a markdown document sees: HTML comments and link reference definitions never show on the
rendered page, so they are dropped before the document is chunked (Node.js's docs keep each API's version
history in a `<!-- YAML … -->` comment, and many READMEs end in a block of `[label]: url` lines; quoted, they
read as noise, and embedded, they dilute the passage around them). HTML blocks show as what they render, and a
line of tags alone (an empty anchor) as nothing."""

from __future__ import annotations

import re

from backend.pipeline.code_fences import FENCE, closing_fence
from backend.pipeline.html_blocks import BLOCK_START, html_block_markdown, renders_nothing

_COMMENT_START = re.compile(r" {0,3}<!--")
_COMMENT_END = "-->"
_LINK_DEFINITION = re.compile(r""" {0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*(?:<(?P<angled>[^>\n]*)>|(?P<bare>\S+))"""
                              r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*""")


MAX_LINK_TARGETS = 200
MAX_LINK_TARGET_CHARS = 500


def link_targets(text: str) -> list[str]:
    """Where the document's link reference definitions point ("[`fs.watch()`]: fs.md#fswatch" -> "fs.md#fswatch"),
    in order, each once, at most MAX_LINK_TARGETS: the chunks drop the definitions (see visible_markdown), so the
    source graph is told them apart."""
    targets: dict[str, None] = {}
    closing: re.Pattern[str] | None = None  # the open fence's closing line: what a fence holds is code
    for line in text.splitlines():
        if closing is not None:
            closing = None if closing.fullmatch(line) else closing
            continue
        if fence := FENCE.fullmatch(line):
            closing = closing_fence(fence.group(1))
            continue
        found = _LINK_DEFINITION.fullmatch(line.rstrip())
        target = (found.group("angled") or found.group("bare") or "").strip() if found else ""
        if target and not target.startswith("#") and len(target) <= MAX_LINK_TARGET_CHARS:
            targets.setdefault(target, None)
            if len(targets) >= MAX_LINK_TARGETS:
                break
    return list(targets)


# A code span (kept as written, "`arr[0][1]`") or a reference-style link, whose text may hold code spans.
_SPAN_OR_LINK = re.compile(r"(?P<code>(`+)(?:(?!\2).)+?\2)"
                           r"|\[(?P<text>(?:`[^`\n]*`|[^\[\]\n`]|\[[^\[\]\n]*\])+)\]\[[^\[\]\n]*\]")


def link_texts(line: str) -> str:
    """Reference-style links ("[`fs.watch()`][]", "[the guide][guide]") as the text a reader sees (their
    definitions are dropped); code spans are left as written."""
    if "][" not in line:
        return line
    return _SPAN_OR_LINK.sub(lambda found: found.group("code") or found.group("text"), line)


_TABLE = re.compile(r" {0,3}<table(?=[\s>]|$)", re.IGNORECASE)
_TABLE_END = re.compile(r"</table\s*>", re.IGNORECASE)
MAX_TABLE_LINES = 2000


def _html_block_end(lines: list[str], start: int, *, table: bool) -> int:
    """Where an HTML block opened on the line before `start` ends: a blank line, or for a table (whose rows may
    be apart), the line closing it (at most MAX_TABLE_LINES on)."""
    if table:
        limit = min(len(lines), start + MAX_TABLE_LINES)
        if _TABLE_END.search(lines[start - 1]):
            return start
        closing = next((i for i in range(start, limit) if _TABLE_END.search(lines[i])), None)
        if closing is not None:
            return closing + 1
    return next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))


def visible_markdown(text: str) -> str:
    """The text without HTML comment blocks (from a line starting with "<!--" to the line holding "-->") and
    link reference definitions at the start of a paragraph, with HTML blocks (a line opening one of HTML's block
    tags, to a blank line) as the markdown a reader sees of them; fenced code is kept exactly as it is."""
    kept: list[str] = []
    closing: re.Pattern[str] | None = None  # the open fence's closing line
    in_comment = False
    paragraph_start = True  # after a blank line, a definition, or at the top
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        body = line.rstrip("\r\n")
        if closing is not None:
            kept.append(line)
            closing = None if closing.fullmatch(body) else closing
            continue
        if in_comment or _COMMENT_START.match(body):
            end = body.find(_COMMENT_END, 0 if in_comment else body.index("<!--") + 4)
            in_comment = end < 0
            rest = "" if in_comment else body[end + len(_COMMENT_END):]
            if rest.strip():
                kept.append(rest.lstrip() + line[len(body):])
                paragraph_start = False
            continue
        if paragraph_start and _LINK_DEFINITION.fullmatch(body):
            continue
        if paragraph_start and BLOCK_START.match(body):
            end = _html_block_end(lines, index, table=_TABLE.match(body) is not None)
            kept.append(html_block_markdown("".join([line, *lines[index:end]])) + "\n")
            index = end
            continue
        if renders_nothing(body):
            continue  # an empty anchor: the link target of a heading, nothing to read
        if fence := FENCE.fullmatch(body):
            closing = closing_fence(fence.group(1))
        kept.append(line if fence else link_texts(line))
        paragraph_start = not body.strip()
    return "".join(kept)
