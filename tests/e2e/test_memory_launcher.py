"""Guru memory through `./openguru start`: a maintainer corrects an answer on the question's dashboard page, the
next visitor asking the same thing in other words gets the note first, cited as a maintainer note, and after a
restart the note still answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.pdfs import write_pdf
from tests.support.product import Product, ask_on_guru_page, create_guru, eventually, launch, manage, query, stop

pytestmark = pytest.mark.slow

SLUG = "port-guru"
PAGES = [["Running the server", "Start the server with tool serve.", "The server listens on port 8000 by default.",
          "Pass --port to choose another port."]]
NOTE = "Since version 3 the server listens on port 9090 by default, not 8000; the manual is out of date."


def _done(product: Product, question: str) -> tuple[str, list[dict[str, Any]]]:
    events = ask_on_guru_page(product, SLUG, question)
    assert events[-1][0] == "done", events[-3:]
    text = "".join(str(data.get("text", "")) for kind, data in events if kind == "delta")
    return text, events[-1][1]["references"]


def test_a_correction_made_in_the_dashboard_answers_the_next_asker_and_outlives_a_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    env = {"OPENGURU_WEB_RATE_LIMIT": "0"}
    product = launch(data_dir, env=env)
    try:
        browser = create_guru(product, SLUG, "Port Guru", "the tool command-line server")
        manage(product, "add_source", SLUG, str(write_pdf(tmp_path / "manual.pdf", PAGES)))
        eventually(lambda: query(product, "SELECT status FROM sources_datasource") == ("INDEXED",), "indexing", 120)
        text, references = _done(product, "Which port does the server listen on by default?")
        assert "8000" in text and "9090" not in text
        row = query(product, "SELECT id FROM answering_question ORDER BY id DESC LIMIT 1")
        assert row is not None
        page = f"/dashboard/g/{SLUG}/questions/{row[0]}/"
        done = browser.submit(page, {"text": NOTE}, action=f"{page}correct/")
        assert "Saved the note" in done
        assert query(product, "SELECT status, origin FROM answering_memory") == ("APPROVED", "CORRECTION")

        text, references = _done(product, "What is the default port of the server?")
        assert "9090" in text and references[0]["kind"] == "MEMORY" and references[0]["title"] == "Maintainer note"
        assert any(r["kind"] == "PDF" for r in references[1:]), "the manual is still cited beside the note"
        assert "Maintainer note" in browser.get(f"/dashboard/g/{SLUG}/memory/")
    finally:
        assert stop(product) == 0
    product = launch(data_dir, env=env)
    try:
        text, references = _done(product, "By default, what port does the server use?")
        assert "9090" in text and references[0]["kind"] == "MEMORY"
    finally:
        assert stop(product) == 0
