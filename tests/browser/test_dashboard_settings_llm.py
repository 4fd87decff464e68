"""In Chromium, staff set up, test and save the chat provider on the Settings tab; the guru page answers with it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.core.selectors import settings_get
from tests.browser.test_guru_page import celery_guru  # noqa: F401  (the fixture: a guru with an indexed PDF)
from tests.factories import UserFactory
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.support.browser import log_in_as, playwright_sync_api
from tests.support.llm_scripts import RelevantScript

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect
ANSWER = "Call self.retry() inside a bound task, with a countdown in seconds [1]."


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_guru")
def test_staff_set_up_an_openai_compatible_server_and_the_guru_answers_with_it(
    page: Page, asgi_live_server: str, openai_server: OpenAIFakeServer, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    openai_server.script = RelevantScript(ANSWER)
    base = asgi_live_server
    log_in_as(page, base, UserFactory(username="root", is_staff=True, is_superuser=True))
    page.goto(f"{base}/dashboard/settings/")
    card = page.locator("#llm")
    expect(card.get_by_role("heading", name="Chat model")).to_be_visible()
    expect(card).to_contain_text("OPENAI_BASE_URL")  # the variables are named even when none is set

    card.get_by_label("Chat provider").select_option("openai-compatible")
    card.get_by_label("Base URL").fill(openai_server.api_base)
    card.get_by_label("API key", exact=True).fill(FAKE_OPENAI_KEY)
    card.get_by_label("Default model").fill(FAKE_CHAT_MODEL)
    card.get_by_role("button", name="Test connection").click()
    result = card.locator("#llm-test-result")
    expect(result).to_have_text(re.compile(rf"Connected: {FAKE_CHAT_MODEL} answered in \d+ ms\."))
    expect(result).to_have_class(re.compile(r"\bok\b"))
    assert card.get_by_label("API key", exact=True).input_value() == FAKE_OPENAI_KEY  # still there for Save
    assert page.evaluate("[...document.querySelectorAll('#llm-models option')].map(o => o.value)") == [
        FAKE_CHAT_MODEL]
    screenshot("tested")

    card.get_by_role("button", name="Save chat model").click()
    expect(page.get_by_text("Chat provider saved.")).to_be_visible()
    card = page.locator("#llm")
    expect(card).to_contain_text("A key is set")
    assert card.get_by_label("API key", exact=True).input_value() == ""  # never rendered back
    assert FAKE_OPENAI_KEY not in page.content()
    assert settings_get().llm_provider == "openai-compatible"
    screenshot("saved")

    page.goto(f"{base}/g/celery/")
    page.get_by_label("Ask Celery Guru a question").fill("How do I retry a task?")
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.locator("#thread .turn .answer")
    expect(answer).not_to_have_class(re.compile(r"\bstreaming\b"), timeout=30_000)
    expect(answer).to_contain_text("Call self.retry() inside a bound task")
    assert any(request.stream for request in openai_server.script.requests)
    screenshot("answered")
    assert page_errors == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_environment_overrides_the_form_and_the_page_says_so(
    page: Page, asgi_live_server: str, openai_server: OpenAIFakeServer, settings: SettingsWrapper,
    page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    settings.OPENGURU_LLM = openai_server.llm_settings()  # OPENAI_API_KEY, OPENAI_BASE_URL, OPENGURU_CHAT_MODEL
    log_in_as(page, asgi_live_server, UserFactory(username="root", is_staff=True))
    page.goto(f"{asgi_live_server}/dashboard/settings/")
    card = page.locator("#llm")
    expect(card.get_by_role("note")).to_contain_text("Set by the environment. OPENAI_API_KEY, OPENAI_BASE_URL")
    for label in ("Chat provider", "Base URL"):
        expect(card.get_by_label(label)).to_be_disabled()
    expect(card.get_by_label("API key", exact=True)).to_be_disabled()
    expect(card.get_by_label("Base URL")).to_have_value(openai_server.api_base)
    card.get_by_role("button", name="Test connection").click()
    expect(card.locator("#llm-test-result")).to_have_text(re.compile(r"answered in \d+ ms"))
    assert FAKE_OPENAI_KEY not in page.content()
    screenshot("environment")
    assert page_errors == []
