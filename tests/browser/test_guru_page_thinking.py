"""The guru page in Chromium while the agentic path researches: each step shows as "Thinking: …" in the turn's
status line, then the answer replaces it with its citations."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from backend.adapters.llm.fake import ScriptedReply
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import grades
from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_each_research_step_shows_as_thinking_then_the_cited_answer(
    page: Page, asgi_live_server: str, docs_guru: Guru, openai_server: OpenAIFakeServer
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    openai_server.script.push(
        grades(0.9), ScriptedReply(text="A speculative answer.", stream=True),
        ScriptedReply(text="", tool_calls=(("search", {"query": "retry countdown"}),), stream=False),
        # The model thinks for a while after reading the search: the page shows the finished step meanwhile.
        ScriptedReply(text="", stream=False, delay=2.0),
        grades(0.9), ScriptedReply(text="Use countdown to delay a retry [1].", stream=True))
    page.goto(f"{asgi_live_server}/g/docs/")
    page.get_by_label("Ask Docs Guru a question").fill("Compare countdown and max_retries")
    page.get_by_role("button", name="Ask", exact=True).click()
    turn = page.locator("#thread .turn").first
    expect(turn.locator(".turn-status")).to_have_text("Thinking: Searching for “retry countdown”: done",
                                                      timeout=20_000)
    expect(turn.locator(".answer")).to_contain_text("Use countdown to delay a retry", timeout=30_000)
    expect(turn.locator(".turn-status")).not_to_have_text(re.compile("Thinking"))
    assert errors == []
