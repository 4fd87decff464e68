"""A worker SIGKILLed while it builds a summary tree: the restarted worker resumes the tree, re-using every
node already made (counted at the fake LLM), and the tree ends whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.adapters.llm.fake import ReplyScript, ScriptedReply
from tests.e2e.test_worker_recovery import _kill_worker, _worker_pid
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.support.product import Product, collection_ready, eventually, launch, manage, stop
from tests.support.summaries import summarise_calls, topic_paragraphs

pytestmark = pytest.mark.slow

CREATE_GURU = ("from backend.gurus.models import Guru; "
               "Guru.objects.get_or_create(slug='resume', defaults={'name': 'Resume', 'domain_knowledge': 'tasks'})")
SMALL_TREES = {"SUMMARIZATION_MAX_LENGTH": "1000", "SUMMARIZATION_SUMMARY_LENGTH": "240",
               "SUMMARIZATION_MIN_LENGTH": "200", "SUMMARIZATION_OVERLAP_LENGTH": "50",
               "OPENGURU_SUMMARY_CONCURRENCY": "1"}


def _source(product: Product) -> dict[str, Any]:
    with sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT status, summary_state, summary_done, summary_total FROM sources_datasource").fetchone()
        nodes = db.execute("SELECT COUNT(*), SUM(is_source_root) FROM sources_summarization").fetchone()
    return {**dict(row), "nodes": nodes[0], "roots": nodes[1]} if row else {}


def test_a_killed_worker_resumes_the_tree_without_re_summarising(tmp_path: Path,
                                                                 openai_server: OpenAIFakeServer) -> None:
    openai_server.script = ReplyScript(default=ScriptedReply(text="A summary of this part.", delay=0.25))
    env = {"OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": openai_server.api_base,
           "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL, **SMALL_TREES}
    pages = [[p] for p in topic_paragraphs("Scheduler", 40)]
    pdf = write_pdf(tmp_path / "long.pdf", pages)
    product = launch(tmp_path / "data", env=env)
    try:
        manage(product, "shell", "-c", CREATE_GURU)
        eventually(lambda: collection_ready(product, "resume"), "the guru's collection", 120)
        assert "Indexed" in manage(product, "add_source", "resume", str(pdf))
        eventually(lambda: 4 <= _source(product).get("summary_done", 0) <= _source(product)["summary_total"] - 8,
                   "the tree under way", 120)
        first = _worker_pid(product)
        assert first is not None
        _kill_worker(first)
        made_before = _source(product)["nodes"]
        eventually(lambda: _worker_pid(product) not in (None, first), "the launcher restarting the worker", 30)
        eventually(lambda: _source(product)["summary_state"] == "DONE", "the resumed tree", 180)
        # The resumed tree took the killed worker's lease at once instead of waiting out its TTL.
        assert "took over lock:summaries:" in (product.data_dir / "logs" / "worker.log").read_text()
        source = _source(product)
        assert source["nodes"] == source["summary_total"] and source["roots"] == 1
        calls = len(summarise_calls(openai_server.script.requests))
        # Every node once, plus at most the one call in flight when the worker died.
        assert source["summary_total"] <= calls <= source["summary_total"] + 1, (calls, source, made_before)
    finally:
        stop(product)
