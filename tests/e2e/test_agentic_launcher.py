"""The agentic path through `./openguru start` with a language model (the OpenAI wire protocol, a fake server on
127.0.0.1): a comparing question asked on the guru page streams its research steps as "thinking" statuses, then
an answer citing what the research read; the worker's summaries use the same model meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.support.llm_scripts import AgentScript
from tests.support.product import (
    ask_on_guru_page,
    create_guru,
    eventually,
    launch,
    manage,
    query,
    stop,
    summaries_settled,
)

pytestmark = pytest.mark.slow

SLUG = "retry-guru"
PAGES = [["Retrying tasks", "The countdown argument delays each retry by that many seconds."],
         ["Retry limits", "max_retries caps how many times a task is retried before it fails."]]
ANSWER = "countdown delays each retry [1]; max_retries caps them [2]."


def test_a_comparing_question_is_researched_step_by_step_on_the_guru_page(tmp_path: Path,
                                                                           openai_server: OpenAIFakeServer) -> None:
    openai_server.script = AgentScript(ANSWER, ("countdown retry delay", "max_retries limit"))
    env = {"OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": openai_server.api_base,
           "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL, "OPENGURU_WEB_RATE_LIMIT": "0"}
    product = launch(tmp_path / "data", env=env)
    try:
        create_guru(product, SLUG, "Retry Guru", "Celery task retries")
        manage(product, "add_source", SLUG, str(write_pdf(tmp_path / "manual.pdf", PAGES)))
        eventually(lambda: query(product, "SELECT status FROM sources_datasource") == ("INDEXED",), "indexing", 120)
        eventually(lambda: summaries_settled(product), "the source's summary (it calls the same fake LLM)", 120)
        events = ask_on_guru_page(product, SLUG, "Compare countdown and max_retries: what does each change?")
        thinking = [data["text"] for kind, data in events if kind == "status" and data.get("stage") == "thinking"]
        assert thinking == ["Searching for “countdown retry delay”", "Searching for “countdown retry delay”: done",
                            "Searching for “max_retries limit”", "Searching for “max_retries limit”: done"]
        assert "".join(data["text"] for kind, data in events if kind == "delta") == ANSWER
        done = events[-1][1]
        assert events[-1][0] == "done" and done["timings"]["agent_steps"] == 2
        assert [r["cited"] for r in done["references"]][:2] == [True, True]
        assert any(r.tools for r in openai_server.script.requests)
    finally:
        assert stop(product) == 0
