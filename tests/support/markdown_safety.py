"""What a CommonMark renderer would make live in a markdown text: raw HTML and script-capable links."""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_DANGEROUS = {"javascript", "vbscript", "data", "file"}


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    # Judge the text, not markdown-it's own guard: accept every link and keep it as written (entities decoded).
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]
    return md


_MD = _parser()


def _tokens(text: str) -> Iterator[Token]:
    for token in _MD.parse(text):
        yield token
        yield from token.children or ()


def live_html(text: str) -> list[str]:
    """The raw HTML blocks and inline tags a renderer would pass through."""
    return [t.content for t in _tokens(text) if t.type in ("html_block", "html_inline")]


def _browser_scheme(url: str) -> str:
    # As a browser's URL parser: tab and newlines vanish, leading controls and spaces are stripped.
    cleaned = re.sub(r"[\t\n\r]", "", url).lstrip("".join(chr(c) for c in range(33)))
    found = _SCHEME.match(cleaned)
    return found.group(1).lower() if found else ""


def script_links(text: str) -> list[str]:
    """Link and image targets whose scheme can run script or read local files."""
    urls = [str(t.attrGet("href") or t.attrGet("src") or "") for t in _tokens(text) if t.type in ("link_open", "image")]
    return [u for u in urls if _browser_scheme(u) in _DANGEROUS]
