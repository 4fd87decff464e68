"""A question about a tool the guru never mentions, named in lower case, is refused through the real pipeline
(real pages indexed into Milvus Lite, the worker's term counts, the local embedder and reranker); a question
holding an everyday word the guru does not use is still answered."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from backend.gurus.models import Guru

pytestmark = [pytest.mark.django_db]

# The covered question "How should logging be configured in production?" with one more word each: a tool
# named in lower case that no English word list accounts for (two word pieces, so the piece count alone
# would call it everyday), or an everyday word the pages never use.
TOOLS = ["ansible", "heroku", "redis"]
EVERYDAY = ["laptop", "refresh"]


def _ask(guru: Guru, tmp_path: Path, rows: list[dict[str, object]]) -> list[dict[str, object]]:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = StringIO()
    call_command("evaluate", guru.slug, "--set", str(path), "--json", stdout=out, stderr=StringIO())
    results: list[dict[str, object]] = json.loads(out.getvalue())["results"]
    return results


def test_a_lower_case_tool_the_guru_never_mentions_is_refused_an_everyday_word_is_not(docs: Guru,
                                                                                      tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"question": f"How should logging be configured in production with {tool}?", "refusal_kind": "near-miss",
         "category": "near-miss"} for tool in TOOLS]
    rows += [{"question": "How should I configure logging in production after a refresh of my laptop?",
              "expected_sources": ["Logging"], "category": "semantic"}]
    results = _ask(docs, tmp_path, rows)
    for tool, result in zip(TOOLS, results[:3], strict=True):
        assert result["refused"], (tool, result["signals"])
        assert result["signals"]["absent_name"] == 1.0  # type: ignore[index]
    everyday = results[3]
    assert not everyday["refused"] and everyday["signals"]["absent_name"] == 0.0, everyday["signals"]  # type: ignore[index]
    assert "Logging" in json.dumps(everyday["references"])
