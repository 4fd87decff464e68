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
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.integration.answering.answer_support import grades
from tests.support.product import (
    Browser,
    Product,
    ask_on_guru_page,
    child_pid,
    eventually,
    launch,
    manage,
    stop,
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
    eventually(lambda: re.search(rf"{SLUG}\s+guru_broker_guru\s+384\s+0\s+ok", manage(product, "collections"))
               is not None, "the guru's collection")
    out = manage(product, "add_source", SLUG, str(pdf))
    assert re.search(r"Indexed [1-9]\d* chunks from manual.pdf", out), out


def test_a_restarted_product_answers_the_first_new_question(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    pdf = write_pdf(tmp_path / "manual.pdf", [
        ["The visibility timeout redelivers unacknowledged tasks to another worker after one hour."],
        ["The broker URL is set with the CELERY_BROKER_URL setting; Redis and RabbitMQ are supported."],
    ])
    product = launch(data_dir)
    try:
        _create_indexed_guru(product, pdf)
        assert "visibility timeout" in _answer_text(ask_on_guru_page(product, SLUG, "What does the visibility "
                                                                                    "timeout do?")).lower()
    finally:
        assert stop(product) == 0

    hint = f"OPENGURU_DATA_DIR={data_dir.resolve()} ./openguru manage changepassword admin"
    assert f"(change it later: {hint})" in product.output.read_text()
    again = launch(data_dir)
    try:
        # The second banner has no password, but says who the administrator is and how to reset it.
        assert f"An administrator already exists: admin (forgot the password? {hint})" in again.output.read_text()
        # Before any question: the web process loaded the released collection on its first use of the store.
        assert json.loads(Browser(again.url).get("/api/v1/health/"))["vector_store"] == "ok"
        assert re.search(rf"{SLUG}\s+guru_broker_guru\s+384\s+[1-9]\d*\s+ok", manage(again, "collections"))
        answer = _answer_text(ask_on_guru_page(again, SLUG, "How is the broker URL set?"))
        assert "CELERY_BROKER_URL" in answer
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
