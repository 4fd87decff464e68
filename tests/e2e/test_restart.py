"""A full restart of `./openguru start` with an indexed guru: the first new question is answered."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fakes.pdfs import write_pdf
from tests.support.product import Browser, Product, ask_on_guru_page, eventually, launch, manage, stop

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

    again = launch(data_dir)
    try:
        # Before any question: the web process loaded the released collection on its first use of the store.
        assert json.loads(Browser(again.url).get("/api/v1/health/"))["vector_store"] == "ok"
        assert re.search(rf"{SLUG}\s+guru_broker_guru\s+384\s+[1-9]\d*\s+ok", manage(again, "collections"))
        answer = _answer_text(ask_on_guru_page(again, SLUG, "How is the broker URL set?"))
        assert "CELERY_BROKER_URL" in answer
    finally:
        assert stop(again) == 0
