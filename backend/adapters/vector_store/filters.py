"""Milvus filter expressions built from values: integers typed, strings quoted, so nothing is injected."""

from __future__ import annotations

import json


def like_literal(text: str) -> str:
    """A Milvus string literal matching `text` anywhere, literally: wildcards and quotes escaped, never injected.

    Milvus Lite does not take filter parameters, so the user's text is quoted here: a JSON string is a valid
    Milvus literal (backslash escapes), and `%`/`_` are escaped so they match themselves.
    """
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return json.dumps(f"%{escaped}%", ensure_ascii=False)
