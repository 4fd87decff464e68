"""Milvus filter expressions built from values: integers typed, strings quoted, so nothing is injected."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

from backend.pipeline.types import SUMMARY_GENERATION


def like_literal(text: str) -> str:
    """A Milvus string literal matching `text` anywhere, literally: wildcards and quotes escaped, never injected.

    Milvus Lite does not take filter parameters, so the user's text is quoted here: a JSON string is a valid
    Milvus literal (backslash escapes), and `%`/`_` are escaped so they match themselves.
    """
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return json.dumps(f"%{escaped}%", ensure_ascii=False)


def live_filter(live: Mapping[int, int], summaries: Collection[int] = ()) -> str:
    """A Milvus filter keeping each source's live generation, and the summary rows of `summaries`, grouped
    by generation to stay short.

    Only integers reach the expression (typed, never user strings), so it cannot be injected.
    """
    by_generation: dict[int, list[int]] = {}
    for source_id, generation in live.items():
        by_generation.setdefault(int(generation), []).append(int(source_id))
    for source_id in summaries:
        by_generation.setdefault(SUMMARY_GENERATION, []).append(int(source_id))
    groups = sorted(by_generation.items())
    return " or ".join(f"(generation == {generation} and source_id in {sorted(ids)})" for generation, ids in groups)
