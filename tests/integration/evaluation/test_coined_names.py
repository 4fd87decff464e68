"""A question about a tool the guru never mentions, named in lower case, is refused through the real pipeline
(real pages indexed into Milvus Lite, the worker's term counts, the local embedder and reranker); a question
holding an everyday word the guru does not use is still answered."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.source_support import index_source
from tests.support.summaries import page_html

pytestmark = [pytest.mark.django_db]

# The covered question "How should logging be configured in production?" with one more word each: a tool
# named in lower case that no English word list accounts for (two word pieces, so the piece count alone
# would call it everyday; "systemd" is also one letter from "system", which the pages hold, but a name built
# on a word is not that word mistyped), or an everyday word the pages never use.
TOOLS = ["ansible", "heroku", "redis", "systemd"]
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
    for tool, result in zip(TOOLS, results[:4], strict=True):
        assert result["refused"], (tool, result["signals"])
        assert result["signals"]["absent_name"] == 1.0  # type: ignore[index]
    everyday = results[4]
    assert not everyday["refused"] and everyday["signals"]["absent_name"] == 0.0, everyday["signals"]  # type: ignore[index]
    assert "Logging" in json.dumps(everyday["references"])


def test_a_name_the_pages_write_another_way_is_answered(
    docs: Guru, fake_site: SiteFake, tmp_path: Path, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    page = page_html("Development server", [
        "The development server listens on port 5000 unless another port is given.",
        "On macOS the AirPlay Receiver service may already use port 5000: turn it off in System Settings, or run "
        "the server on another port."])
    fake_site.overrides["/server"] = Reply(200, page.encode(), {"Content-Type": "text/html"})
    index_source(django_capture_on_commit_callbacks, docs, SourceKind.WEBSITE, f"{fake_site.base_url}/server")
    # "MacBook" is nowhere in the pages, but the evidence says "macOS": the thing asked about is there. The
    # pages name nothing like "kubernetes".
    rows: list[dict[str, object]] = [
        {"question": "On my MacBook the development server says port 5000 is in use. What is using it?",
         "expected_sources": ["Development server"], "category": "semantic"},
        {"question": "How do I run the development server on port 5000 with kubernetes?",
         "refusal_kind": "near-miss", "category": "near-miss"}]
    variant, tool = _ask(docs, tmp_path, rows)
    assert not variant["refused"] and variant["signals"]["absent_name"] == 0.0, variant["signals"]  # type: ignore[index]
    assert "AirPlay Receiver" in str(variant["answer"])
    assert tool["signals"]["absent_name"] == 1.0, tool["signals"]  # type: ignore[index]  # no word of the page means it


def test_a_name_beside_code_the_pages_quote_is_the_setting_of_the_question(docs: Guru, tmp_path: Path) -> None:
    # "Chromebook" is in no page and means none of their words; render_template is quoted by the Templates page.
    rows: list[dict[str, object]] = [
        {"question": "On my Chromebook, where does render_template() look for the template files?",
         "expected_sources": ["Templates"], "category": "semantic"},
        {"question": "On my Chromebook, where are template files looked for?", "expected_sources": ["Templates"],
         "category": "semantic"}]
    with_code, without = _ask(docs, tmp_path, rows)
    assert with_code["signals"]["absent_name"] == 0.0 and not with_code["refused"], with_code["signals"]  # type: ignore[index]
    assert "templates folder" in str(with_code["answer"])
    assert without["signals"]["absent_name"] == 1.0, without["signals"]  # type: ignore[index]
