"""A running launcher answers with the chat provider saved on its Settings page, and with a later change made by
another process, without a restart (core/llm_config.py re-reads the settings row every few seconds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.pipeline.answerer_offline import NO_LLM_NOTICE
from tests.e2e.test_restart import SLUG, _answer_text, _create_indexed_guru
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.support.llm_scripts import RelevantScript
from tests.support.product import Browser, ask_on_guru_page, eventually, launch, manage, stop

pytestmark = pytest.mark.slow

ANSWER = "Unacknowledged tasks are redelivered after the visibility timeout [1]."
QUESTION = "What happens to unacknowledged tasks?"
TO_OFFLINE = "from backend.core.services import settings_update as u; u(llm_provider='offline')"


def _answer(product: object, question: str) -> str:
    return _answer_text(ask_on_guru_page(product, SLUG, question))  # type: ignore[arg-type]


def test_a_provider_saved_in_the_dashboard_is_used_by_the_running_web_process(
    tmp_path: Path, openai_server: OpenAIFakeServer
) -> None:
    openai_server.script = RelevantScript(ANSWER)
    pdf = write_pdf(tmp_path / "manual.pdf", [["The visibility timeout redelivers unacknowledged tasks."]])
    # No LLM variable: offline until staff choose a provider. Polling asks many questions: no rate limit.
    product = launch(tmp_path / "data", env={"OPENGURU_WEB_RATE_LIMIT": "0"})
    try:
        _create_indexed_guru(product, pdf)
        assert _answer(product, QUESTION).startswith(NO_LLM_NOTICE)
        staff = Browser(product.url)
        staff.submit("/accounts/login/", {"username": product.username, "password": product.password})
        page = staff.submit("/dashboard/settings/llm/", {
            "llm_provider": "openai-compatible", "llm_base_url": openai_server.api_base,
            "api_key": FAKE_OPENAI_KEY, "answer_model": FAKE_CHAT_MODEL})
        assert "Chat provider saved." in page and FAKE_OPENAI_KEY not in page

        assert _answer(product, "And what happens to tasks nobody acknowledged?") == ANSWER  # the next answer
        assert any(r.stream and r.model == FAKE_CHAT_MODEL for r in openai_server.script.requests)

        # Another process changes the row: the web process never saw a save signal, yet follows within seconds.
        manage(product, "shell", "-c", TO_OFFLINE)
        questions = (f"Question {n}: where do unacknowledged tasks go?" for n in range(1000))
        eventually(lambda: _answer(product, next(questions)).startswith(NO_LLM_NOTICE),
                   "the web process to answer offline", timeout=30)
    finally:
        assert stop(product) == 0
