"""A full restart of `./openguru start` with an indexed guru, and a crash of its web process mid-answer."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from backend.adapters.llm.fake import ScriptedReply
from backend.pipeline.answerer_offline import NO_LLM_NOTICE
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.integration.answering.answer_support import grades
from tests.support.llm_scripts import RelevantScript
from tests.support.product import (
    Browser,
    Product,
    ask_on_guru_page,
    child_pid,
    collection_ready,
    eventually,
    launch,
    manage,
    stop,
    summaries_settled,
)

pytestmark = pytest.mark.slow

SLUG = "broker-guru"


def _answer_text(events: list[tuple[str, dict]]) -> str:  # type: ignore[type-arg]
    errors = [data for name, data in events if name == "error"]
    assert not errors, errors
    assert events[-1][0] == "done", events[-3:]
    return "".join(data["text"] for name, data in events if name == "delta")


def _create_indexed_guru(product: Product, pdf: Path) -> None:
    browser = Browser(product.url)
    browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
    browser.submit("/dashboard/gurus/new/", {
        "slug": SLUG, "name": "Broker Guru", "domain_knowledge": "Celery brokers", "base_color": "#1f6feb",
        "language": "en", "active": "on",
    })
    eventually(lambda: collection_ready(product, SLUG), "the guru's collection")
    assert re.search(rf"{SLUG}\s+guru_broker_guru\s+384\s+0\s+ok", manage(product, "collections"))
    out = manage(product, "add_source", SLUG, str(pdf))
    assert re.search(r"Indexed [1-9]\d* chunks from manual.pdf", out), out


LLM_ANSWER = "Unacknowledged tasks are redelivered after the visibility timeout [1]."
TO_OFFLINE = "from backend.core.services import settings_update as u; u(llm_provider='offline')"
# Polling asks many questions: no rate limit.
UNLIMITED = {"OPENGURU_WEB_RATE_LIMIT": "0"}


def _save_provider(product: Product, server: OpenAIFakeServer) -> None:
    """Staff choose an OpenAI-compatible server on the Settings page, as in the browser."""
    staff = Browser(product.url)
    staff.submit("/accounts/login/", {"username": product.username, "password": product.password})
    page = staff.submit("/dashboard/settings/llm/", {
        "llm_provider": "openai-compatible", "llm_base_url": server.api_base,
        "api_key": FAKE_OPENAI_KEY, "answer_model": FAKE_CHAT_MODEL})
    assert "Chat provider saved." in page and FAKE_OPENAI_KEY not in page


def test_a_restarted_product_answers_the_first_new_question(tmp_path: Path, openai_server: OpenAIFakeServer) -> None:
    """Also: the provider saved in the dashboard is used at once, survives the restart, and a change made by
    another process reaches the running web process within seconds (core/llm_config.py)."""
    openai_server.script = RelevantScript(LLM_ANSWER)
    data_dir = tmp_path / "data"
    pdf = write_pdf(tmp_path / "manual.pdf", [
        ["The visibility timeout redelivers unacknowledged tasks to another worker after one hour."],
        ["The broker URL is set with the CELERY_BROKER_URL setting; Redis and RabbitMQ are supported."],
    ])
    product = launch(data_dir, env=UNLIMITED)
    try:
        _create_indexed_guru(product, pdf)
        first = _answer_text(ask_on_guru_page(product, SLUG, "What does the visibility timeout do?"))
        assert first.startswith(NO_LLM_NOTICE) and "visibility timeout" in first.lower()
        _save_provider(product, openai_server)
        assert _answer_text(ask_on_guru_page(product, SLUG, "What happens to unacknowledged tasks?")) == LLM_ANSWER
    finally:
        assert stop(product) == 0

    hint = f"OPENGURU_DATA_DIR={data_dir.resolve()} ./openguru manage changepassword admin"
    assert f"(change it later: {hint})" in product.output.read_text()
    again = launch(data_dir, env=UNLIMITED)
    try:
        # The second banner has no password, but says who the administrator is and how to reset it.
        assert f"An administrator already exists: admin (forgot the password? {hint})" in again.output.read_text()
        # Before any question: the web process loaded the released collection on its first use of the store.
        assert json.loads(Browser(again.url).get("/api/v1/health/"))["vector_store"] == "ok"
        assert re.search(rf"{SLUG}\s+guru_broker_guru\s+384\s+[1-9]\d*\s+ok", manage(again, "collections"))
        # The first question after the restart: answered from the sources, by the provider saved before it.
        assert _answer_text(ask_on_guru_page(again, SLUG, "How is the broker URL set?")) == LLM_ANSWER
        assert any(r.stream and r.model == FAKE_CHAT_MODEL for r in openai_server.script.requests)
        # Another process changes the row: the web process never saw a save signal, yet follows within seconds.
        manage(again, "shell", "-c", TO_OFFLINE)
        questions = (f"Question {n}: which setting sets the broker URL?" for n in range(1000))
        eventually(lambda: "CELERY_BROKER_URL" in _answer_text(ask_on_guru_page(again, SLUG, next(questions))),
                   "the web process to answer offline", timeout=30)
    finally:
        assert stop(again) == 0


def _stream_until_broken(product: Product, question: str, on_delta: Callable[[int], None]) -> list[str]:
    """Ask on the guru page and read the SSE stream until it ends or breaks; the event names seen."""
    seen: list[str] = []
    with httpx.Client(base_url=product.url, timeout=60) as client:
        client.get(f"/g/{SLUG}/")
        headers = {"X-CSRFToken": client.cookies["csrftoken"], "Referer": f"{product.url}/g/{SLUG}/"}
        try:
            with client.stream("POST", f"/g/{SLUG}/ask/", json={"question": question}, headers=headers) as response:
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        seen.append(line.removeprefix("event: "))
                        if seen[-1] == "delta":
                            on_delta(seen.count("delta"))
        except httpx.TransportError:
            seen.append("broken")
    return seen


def test_a_web_process_killed_mid_answer_breaks_that_stream_and_the_next_question_works(
    tmp_path: Path, openai_server: OpenAIFakeServer
) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [["The visibility timeout redelivers unacknowledged tasks."]])
    env = {"OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": openai_server.api_base,
           "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL}
    product = launch(tmp_path / "data", env=env)
    try:
        _create_indexed_guru(product, pdf)
        slow = ScriptedReply(text=" ".join(f"word{i}" for i in range(200)), chunks=200, chunk_delay=0.05)
        eventually(lambda: summaries_settled(product), "the source's summary (it calls the same fake LLM)")
        openai_server.script.push(grades(0.9), slow)
        web = child_pid(product, b"uvicorn")
        assert web is not None

        def crash(deltas: int) -> None:
            if deltas == 5:
                os.kill(web, signal.SIGKILL)  # a crash of the web process in the middle of an answer

        seen = _stream_until_broken(product, "What does the visibility timeout do?", crash)
        assert "done" not in seen and (seen[-1] == "broken" or "error" in seen), seen[-5:]
        with sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30) as db:
            state, content = db.execute("SELECT state, content FROM answering_question ORDER BY id DESC").fetchone()
        assert (state, content) == ("PENDING", "")  # never COMPLETE, so never served from the cache
        # The beat sweep marks it interrupted once it is older than any answer can be (here: at once).
        sweep = ("from datetime import timedelta as t; "
                 "from backend.answering.recovery import questions_fail_abandoned as f")
        assert manage(product, "shell", "-c", f"{sweep}; print(f(older_than=t(0)))").strip().endswith("1")
        with sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30) as db:
            row = db.execute("SELECT state, error_code FROM answering_question ORDER BY id DESC").fetchone()
        assert tuple(row) == ("FAILED", "interrupted")
        eventually(lambda: child_pid(product, b"uvicorn") not in (None, web), "the launcher restarting web")
        eventually(lambda: _serves(product), "the restarted web server")
        openai_server.script.push(grades(0.9), ScriptedReply(text="It redelivers them [1]."))
        assert _answer_text(ask_on_guru_page(product, SLUG, "What is redelivered?")) == "It redelivers them [1]."
    finally:
        assert stop(product) == 0


def _serves(product: Product) -> bool:
    try:
        return httpx.get(f"{product.url}/api/v1/health/", timeout=5).status_code in (200, 503)
    except httpx.TransportError:
        return False
