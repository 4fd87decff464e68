"""The API's `question_url` opened in Chromium: the very answer, its references and trust, then a new question."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.browser.test_guru_page import FIRST_QUESTION
from tests.browser.test_guru_page import celery_guru as celery_guru  # the fixture, shared
from tests.factories import UserFactory
from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect


def _ask_api(base: str, key: str, question: str) -> dict[str, Any]:
    request = urllib.request.Request(f"{base}/api/v1/celery/answer/", data=json.dumps({"question": question}).encode(),
                                     headers={"X-API-KEY": key, "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_question_url_opens_the_answer(page: Page, asgi_live_server: str, celery_guru: Guru,
                                       page_errors: list[str], screenshot: Callable[..., Path]) -> None:
    user = UserFactory(username="api-user")
    celery_guru.maintainers.add(user)
    key = api_key_create(user=user, name="test", guru=celery_guru).raw
    data = _ask_api(asgi_live_server, key, FIRST_QUESTION)
    assert data["question_url"].startswith(asgi_live_server + "/g/celery/answers/")

    page.goto(data["question_url"])
    turn = page.locator("#thread .turn")
    expect(turn).to_have_count(1)
    expect(turn.locator(".turn-question")).to_have_text(data["question"])
    expect(turn.locator(".answer")).to_contain_text("self.retry()")
    expect(turn.locator(".answer")).not_to_have_class("streaming")
    expect(turn.locator(".ref-title").first).to_contain_text("Celery manual")
    expect(turn.locator(".trust-value")).to_have_text(f"{data['trust_score']}%")
    screenshot("shared-answer")

    # The page is the guru's page: a visitor can go on and ask their own question.
    page.get_by_label("Ask Celery Guru a question").fill("How do I choose a broker?")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#thread .turn")).to_have_count(2)
    expect(page.locator("#thread .turn").nth(1).locator(".answer")).to_contain_text("broker", timeout=30_000)
    assert page_errors == []
