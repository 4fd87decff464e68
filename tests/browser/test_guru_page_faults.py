"""The guru page in Chromium when answering fails: the safe message with its error id, and a web server that
restarts mid-answer (the visitor sees an error, the next question works). Issue #12 items 3 and the faults list."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.models import AnswerState, Question
from backend.core.errors import PUBLIC_MESSAGES
from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, grades
from tests.support.browser import playwright_sync_api
from tests.support.restartable_server import uvicorn_server

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
STREAMING = re.compile(r"\bstreaming\b")


def _ask(page: Page, question: str) -> None:
    page.get_by_label("Ask Docs Guru a question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()


def test_a_model_failure_shows_the_safe_message_and_its_error_id(
    page: Page, asgi_live_server: str, docs_guru: Guru, openai_server: OpenAIFakeServer
) -> None:
    openai_server.script.push(*[ScriptedReply(status=500)] * 4)
    page.goto(f"{asgi_live_server}/g/docs/")
    _ask(page, QUESTION)
    notice = page.locator("#thread .turn .turn-notice.error")
    expect(notice).to_contain_text(PUBLIC_MESSAGES["model_unavailable"], timeout=30_000)
    question = Question.objects.get()
    expect(notice).to_have_text(f"{PUBLIC_MESSAGES['model_unavailable']} (error id {question.error_id})")
    assert "Scripted" not in (page.locator("#thread").text_content() or "")


def test_a_web_restart_mid_answer_shows_an_error_and_the_next_question_works(
    page: Page, docs_guru: Guru, openai_server: OpenAIFakeServer
) -> None:
    openai_server.script.push(grades(0.9), ScriptedReply(text=" ".join(["word"] * 300), chunks=300,
                                                          chunk_delay=0.05))
    with uvicorn_server() as web:
        page.goto(f"{web.url}/g/docs/")
        _ask(page, QUESTION)
        first = page.locator("#thread .turn").first
        expect(first.locator(".answer")).to_contain_text("word word word", timeout=30_000)
        web.kill()
        # The broken stream is reported, whichever way the browser sees it (network error or early end).
        expect(first.locator(".turn-notice.error")).to_have_text(re.compile(
            r"Could not reach the server|The answer stopped before it was complete"))
        expect(first.locator(".answer")).not_to_have_class(STREAMING)
        assert Question.objects.get().state != AnswerState.COMPLETE
    openai_server.script.push(grades(0.9), ScriptedReply(text="Call self.retry() inside the task [1].", chunks=3))
    with uvicorn_server(web.port):  # the same address, as after a restart
        _ask(page, QUESTION)
        second = page.locator("#thread .turn").nth(1)
        expect(second.locator(".answer")).to_contain_text("Call self.retry() inside the task", timeout=30_000)
        expect(second.locator(".answer")).not_to_have_class(STREAMING)
        expect(second.locator(".turn-notice")).to_be_hidden()
