"""What a reader of a markdown document sees: HTML comments and link reference definitions never show on the
rendered page, so they are dropped before the document is chunked (Node.js's docs keep each API's version
history in a `<!-- YAML … -->` comment, and many READMEs end in a block of `[label]: url` lines; quoted, they
read as noise, and embedded, they dilute the passage around them)."""

from __future__ import annotations

import re

from backend.pipeline.excerpts import FENCE, closing_fence

_COMMENT_START = re.compile(r" {0,3}<!--")
_COMMENT_END = "-->"
_LINK_DEFINITION = re.compile(r""" {0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*(?:<[^>\n]*>|\S+)"""
                              r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*""")


def visible_markdown(text: str) -> str:
    """The text without HTML comment blocks (from a line starting with "<!--" to the line holding "-->") and
    link reference definitions at the start of a paragraph; fenced code is kept exactly as it is."""
    kept: list[str] = []
    closing: re.Pattern[str] | None = None  # the open fence's closing line
    in_comment = False
    paragraph_start = True  # after a blank line, a definition, or at the top
    for line in text.splitlines(keepends=True):
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
        if fence := FENCE.fullmatch(body):
            closing = closing_fence(fence.group(1))
        kept.append(line)
        paragraph_start = not body.strip()
    return "".join(kept)
