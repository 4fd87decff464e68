"""/metrics of the running product: a question answered by a fake LLM and an ingestion move the numbers, and the
counters outlive a restart of `./openguru start`."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.adapters.llm.fake import ScriptedReply
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.integration.answering.answer_support import grades
from tests.support.metrics import Samples, parse
from tests.support.product import (
    Browser,
    Product,
    collection_ready,
    eventually,
    launch,
    manage,
    stop,
    summaries_settled,
)

pytestmark = pytest.mark.slow

SLUG = "metrics-guru"
INDEXED = {"task": "sources.index", "outcome": "success"}
WEB_COMPLETE = {"state": "complete", "channel": "web"}


def _scrape(product: Product) -> Samples:
    response = httpx.get(f"{product.url}/metrics", timeout=30)
    assert response.status_code == 200, response.text[:300]
    return parse(response.text)


def _create_guru_with_a_pdf(product: Product, pdf: Path) -> None:
    browser = Browser(product.url)
    browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    browser.submit("/dashboard/gurus/new/", {
        "slug": SLUG, "name": "Metrics Guru", "domain_knowledge": "Celery brokers", "base_color": "#1f6feb",
        "language": "en", "active": "on",
    })
    eventually(lambda: collection_ready(product, SLUG), "the guru's collection")
    assert re.search(rf"{SLUG}\s+\S+\s+384\s+0\s+ok", manage(product, "collections"))
    out = manage(product, "add_source", SLUG, str(pdf))  # queued; the worker indexes it
    assert re.search(r"Indexed [1-9]\d* chunks from manual.pdf", out), out


def _ask_and_watch(product: Product, question: str) -> tuple[list[str], float]:
    """Ask on the guru page over SSE; the event names, and the streams in flight scraped at the first delta."""
    seen: list[str] = []
    in_flight = -1.0
    with httpx.Client(base_url=product.url, timeout=60) as client:
        client.get(f"/g/{SLUG}/")
        headers = {"X-CSRFToken": client.cookies["csrftoken"], "Referer": f"{product.url}/g/{SLUG}/"}
        with client.stream("POST", f"/g/{SLUG}/ask/", json={"question": question}, headers=headers) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    seen.append(line.removeprefix("event: "))
                    if seen[-1] == "delta" and in_flight < 0:
                        in_flight = _scrape(product).get("openguru_answer_streams_in_flight")
    return seen, in_flight


def _usage_of_answers(product: Product) -> list[dict[str, Any]]:
    with sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30) as db:
        rows = db.execute("SELECT usage FROM answering_question WHERE state = 'COMPLETE'").fetchall()
    return [json.loads(usage) for (usage,) in rows]


def _tokens(usages: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(flow, kind) → tokens, as the answers recorded them on their questions."""
    summed: dict[tuple[str, str], int] = {}
    for usage in usages:
        for flow, used in usage.items():
            assert used["model"] == FAKE_CHAT_MODEL
            for kind in ("prompt", "completion"):
                summed[flow, kind] = summed.get((flow, kind), 0) + int(used.get(f"{kind}_tokens") or 0)
    return summed


def test_answers_tokens_tasks_and_sources_are_counted_and_survive_a_restart(
    tmp_path: Path, openai_server: OpenAIFakeServer
) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [["The visibility timeout redelivers unacknowledged tasks."]])
    env = {"OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": openai_server.api_base,
           "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL, "OPENGURU_METRICS_FLUSH_SECONDS": "1"}
    product = launch(tmp_path / "data", env=env)
    try:
        start = _scrape(product)
        assert start.get("openguru_answers_total", **WEB_COMPLETE) == 0
        _create_guru_with_a_pdf(product, pdf)
        # The worker's pool process ran the task; its count reaches the web process through the store.
        eventually(lambda: _scrape(product).get("openguru_celery_tasks_total", **INDEXED) == 1,
                   "the indexing task counted")
        slow = ScriptedReply(text=" ".join(f"word{i}" for i in range(40)), chunks=40, chunk_delay=0.05,
                             prompt_tokens=120, completion_tokens=40)
        eventually(lambda: summaries_settled(product), "the source's summary (it calls the same fake LLM)")
        openai_server.script.push(grades(0.9), slow)
        seen, in_flight = _ask_and_watch(product, "What does the visibility timeout do?")
        assert seen[-1] == "done" and in_flight == 1, (seen[-3:], in_flight)

        during = _scrape(product)
        assert during.get("openguru_answers_total", **WEB_COMPLETE) == 1
        assert during.get("openguru_answer_streams_in_flight") == 0
        for (flow, kind), tokens in _tokens(_usage_of_answers(product)).items():
            assert during.get("openguru_llm_tokens_total", model=FAKE_CHAT_MODEL, flow=flow, kind=kind) == tokens
        assert during.get("openguru_llm_tokens_total", model=FAKE_CHAT_MODEL, flow="answer", kind="completion") == 40
        assert during.get("openguru_sources", kind="pdf", status="indexed") == 1
        assert during.get("openguru_http_requests_total", method="POST", route="answering:guru-ask",
                          status="2xx") == 1
        assert during.get("openguru_scrape_part_up", part="broker") == 1
        before_stop = during
    finally:
        assert stop(product) == 0

    again = launch(tmp_path / "data", env=env)
    try:
        after = _scrape(again)
        # Counters live in the shared store (the SQLite database here), not in the processes that counted.
        assert after.get("openguru_answers_total", **WEB_COMPLETE) == 1
        assert after.get("openguru_celery_tasks_total", **INDEXED) == 1
        assert after.get("openguru_llm_tokens_total", model=FAKE_CHAT_MODEL, flow="answer", kind="completion") == 40
        assert after.total("openguru_http_requests_total") > before_stop.total("openguru_http_requests_total")
        assert after.get("openguru_answer_streams_in_flight") == 0
    finally:
        assert stop(again) == 0
