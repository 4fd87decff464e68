"""Suggestions and honest footers in Chromium: only published example questions are suggested, on the guru page
and in the widget; the widget's footer says what this install's answerer really does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from backend.answering.models import Channel, Question
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from tests.browser.widget_fixtures import FIRST_QUESTION, HostSite
from tests.browser.widget_support import ask_in_widget, wait_finished
from tests.factories import UserFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.support.browser import log_in_as, playwright_sync_api, save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WRITTEN = "Which brokers are supported?"
PICKED = "How do I retry a task after a few seconds, at most 3 times?"
OFFLINE_FOOT = "Answers are passages quoted from the sources."
LLM_FOOT = "AI-generated answers can be wrong: check the sources."


def _open_widget(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Celery Guru")).to_be_visible()


def _publish_in_dashboard(page: Page, base: str, guru: Guru) -> None:
    """The maintainer writes one example and picks another from what visitors asked, editing it first."""
    maintainer = UserFactory(username="ana")
    guru.maintainers.add(maintainer)
    log_in_as(page, base, maintainer)
    page.goto(f"{base}/dashboard/g/celery/")
    card = page.locator("#examples")
    expect(card).to_contain_text("None yet: the guru page and the widget show no suggestions.")
    card.get_by_label("Write an example question").fill(WRITTEN)
    card.get_by_role("button", name="Publish").first.click()
    expect(page.locator(".message.success")).to_contain_text(f"Published the example “{WRITTEN}”")

    card.get_by_text("Pick from questions visitors asked (1)").click()
    asked = card.get_by_label("Asked question 1")
    expect(asked).to_have_value(FIRST_QUESTION)
    asked.fill(PICKED)  # edited before publishing
    card.locator(".example-candidates").get_by_role("button", name="Publish").click()
    expect(page.locator(".message.success")).to_contain_text(f"Published the example “{PICKED}”")
    card.get_by_role("button", name=f"Move “{PICKED}” up").click()
    expect(card.get_by_label("Example question 1")).to_have_value(PICKED)
    expect(card.get_by_label("Example question 2")).to_have_value(WRITTEN)
    save_screenshot(page, "example-questions-dashboard")


def test_visitor_questions_are_never_suggested_only_published_examples_are(
    page: Page, asgi_live_server: str, widget_guru: Guru, page_errors: list[str],
    host_sites: Callable[[], HostSite],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[site.origin])
    url = site.page("index.html", asgi_live_server, widget.key)

    # A visitor asks through the widget on another site (the offline answerer: no LLM configured).
    _open_widget(page, url)
    expect(page.locator(".examples")).to_be_hidden()
    expect(page.locator(".foot")).to_have_text(OFFLINE_FOOT)
    ask_in_widget(page, FIRST_QUESTION, 1)
    wait_finished(page, 1)
    assert Question.objects.filter(guru=widget_guru, channel=Channel.WIDGET, question=FIRST_QUESTION).exists()

    # The next visitor sees no suggestion at all: not on the guru page, not in a fresh widget.
    visitor = page.context.browser.new_context()  # type: ignore[union-attr]
    other = visitor.new_page()
    other.goto(f"{asgi_live_server}/g/celery/")
    expect(other.get_by_label("Ask Celery Guru a question")).to_be_visible()
    expect(other.locator(".examples, .example-chip")).to_have_count(0)
    assert FIRST_QUESTION not in other.content()
    _open_widget(other, url)
    expect(other.locator(".intro")).to_be_visible()
    expect(other.locator(".examples")).to_be_hidden()
    expect(other.locator(".chip")).to_have_count(0)

    _publish_in_dashboard(page, asgi_live_server, widget_guru)

    # Now both show exactly the published examples, in the maintainer's order.
    other.goto(f"{asgi_live_server}/g/celery/")
    expect(other.locator(".example-chip")).to_have_text([PICKED, WRITTEN])
    assert FIRST_QUESTION not in other.content()
    other.locator(".example-chip").nth(1).click()
    expect(other.get_by_label("Ask Celery Guru a question")).to_have_value(WRITTEN)
    save_screenshot(other, "example-questions-guru-page")
    _open_widget(other, url)
    expect(other.locator(".chip")).to_have_text([PICKED, WRITTEN])
    other.locator(".chip").first.click()
    expect(other.get_by_label("Your question")).to_have_value(PICKED)
    save_screenshot(other, "example-questions-widget")
    visitor.close()
    assert page_errors == []


def test_the_widget_footer_names_a_generating_model_only_when_one_is_configured(
    page: Page, asgi_live_server: str, widget_guru: Guru, widget_llm: OpenAIFakeServer,
    host_sites: Callable[[], HostSite], screenshot: Callable[..., Path],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[site.origin])
    _open_widget(page, site.page("index.html", asgi_live_server, widget.key))
    expect(page.locator(".foot")).to_have_text(LLM_FOOT)
    ask_in_widget(page, FIRST_QUESTION, 1)
    wait_finished(page, 1)
    assert widget_llm.script.requests, "the answer did not come from the configured (fake) OpenAI server"
    screenshot("llm-footer")
