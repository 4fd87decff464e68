"""Summaries through `./openguru start`: the worker builds the trees after indexing, a broad question is
answered from the guru's summary and cites it, and after a restart the trees are still there, not rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.product import Browser, Product, ask_on_guru_page, eventually, launch, manage, stop
from tests.support.summaries import guru_with_two_manuals

pytestmark = pytest.mark.slow

SLUG = "queue-guru"
TREE = ("import json; from backend.sources.models import Summarization as S; "
        "print(json.dumps(sorted(S.objects.filter(guru__slug='queue-guru').values_list('pk', 'is_root', "
        "'source_id'))))")


def _tree(product: Product) -> list[list[object]]:
    return list(json.loads(manage(product, "shell", "-c", TREE).strip().splitlines()[-1]))


def _broad_answer(product: Product) -> dict[str, object]:
    events = ask_on_guru_page(product, SLUG, "What is this project about?")
    assert events[-1][0] == "done", events[-3:]
    return events[-1][1]


def test_trees_are_built_by_the_worker_answer_broad_questions_and_survive_a_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    product = launch(data_dir, env={"OPENGURU_WEB_RATE_LIMIT": "0"})
    try:
        guru_with_two_manuals(product, tmp_path, SLUG)
        eventually(lambda: any(is_root and source is None for _, is_root, source in _tree(product)),
                   "the guru summary over both manuals", timeout=120)
        page = Browser(product.url).get(f"/g/{SLUG}/summary/")
        assert "Scheduler" in page and "Workers" in page
        done = _broad_answer(product)
        summary = next(r for r in done["references"] if r.get("summary") and r["source_id"] == 0)  # type: ignore[union-attr]
        assert summary["cited"] and summary["link"] == f"/g/{SLUG}/summary/"
        before = _tree(product)
    finally:
        assert stop(product) == 0
    product = launch(data_dir, env={"OPENGURU_WEB_RATE_LIMIT": "0"})
    try:
        assert _tree(product) == before, "the trees outlive the processes and are not rebuilt at start"
        done = _broad_answer(product)
        assert any(r.get("summary") and r["cited"] for r in done["references"])  # type: ignore[union-attr]
    finally:
        assert stop(product) == 0
