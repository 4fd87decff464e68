"""reStructuredText inline markup (roles, literals, links) rewritten as the markdown a quote shows."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(\w+(?::\w+)?)\u200b?:`([^`]+)`")
_PLAIN_ROLES = frozenset({"ref", "doc", "term", "abbr", "guilabel", "menuselection", "numref", "pep", "rfc"})


def _role(found: re.Match[str]) -> str:
    role, inner = found.group(1), found.group(2).strip().lstrip("!")
    if inner.endswith(">") and "<" in inner:
        inner = inner[: inner.rfind("<")].strip() or inner
    if inner.startswith("~"):
        inner = inner[1:].split(".")[-1]
    return inner if role.split(":")[-1] in _PLAIN_ROLES else f"`{inner}`"


def inline_markup(text: str, *, rst: bool) -> str:
    """reStructuredText inline markup as markdown (literals, roles, links); whitespace collapsed."""
    text = " ".join(text.split())
    if not rst:
        return text
    text = _ROLE.sub(_role, text)
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    text = re.sub(r"`([^`<]+?)\s*<[^`>]+>`__?", r"\1", text)
    text = re.sub(r"`([^`]+)`__?(?!\w)", r"\1", text)
    # "Run this::" reads "Run this:" and still introduces its literal block; after a space ("slash. ::") the
    # marker shows nothing.
    return re.sub(r"::$", ":", re.sub(r"\s+::$", "", text))
