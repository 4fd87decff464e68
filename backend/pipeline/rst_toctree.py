"""The documents a reStructuredText `toctree` directive lists: Sphinx's table of contents is a page's links to
its children, written as bare document names rather than as roles."""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_ENTRIES = 200
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+toctree::[^\n]*\n(?P<body>(?:(?:[ \t]*\n)|(?:(?P=indent)[ \t]+"
                        r"[^\n]*\n))*)", re.MULTILINE)
_TITLED = re.compile(r"^(?:.*\S\s+)?<(?P<target>[^<>]+)>$")


def toctree_entries(text: str) -> Iterator[str]:
    """Each entry's document name, as written ("install", "/api/index", from "Title <name>" too); options
    (":maxdepth: 2"), `self`, glob patterns and URLs are left out."""
    count = 0
    for directive in _DIRECTIVE.finditer(text if text.endswith("\n") else text + "\n"):
        for line in directive.group("body").splitlines():
            entry = line.strip()
            titled = _TITLED.match(entry)
            entry = titled.group("target").strip() if titled else entry
            if not entry or entry.startswith(":") or entry == "self" or "*" in entry or "://" in entry:
                continue
            yield entry
            count += 1
            if count >= MAX_ENTRIES:
                return
