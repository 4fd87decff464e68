"""Cited vs also retrieved in Chromium: on the guru page, in the widget and on the dashboard's question page the
cited sources are listed [1]..[k], the rest folded under "Also retrieved", and a page held by two sources once."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.answering.models import Question
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from tests.browser.widget_fixtures import HostSite
from tests.browser.widget_support import ask_in_widget, wait_finished
from tests.factories import GuruFactory, UserFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import add_retry_sources
from tests.support.browser import log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = playwright_sync_api().expect

QUESTION = "How do I retry a task?"
ANSWER = "Call `self.retry()` inside the task [1]. Cap the attempts with `max_retries` [3]."


class CitingScript(ReplyScript):
    """Every context graded relevant; every answer cites contexts [1] and [3] of the four."""

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)
        if "grades" in (request.json_schema or {}).get("properties", {}):
            return ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(20)]})
        return ScriptedReply(text=ANSWER, chunks=8, chunk_delay=0.05)


@pytest.fixture
def citing_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    openai_server.script = CitingScript()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    yield openai_server


@pytest.fixture
def retry_guru() -> Guru:
    """Four one-page manuals, and a fifth source holding the first one's text again."""
    cache.clear()
    guru: Guru = GuruFactory(slug="retries", name="Retry Guru", domain_knowledge="retrying Celery tasks")
    add_retry_sources(guru)
    return guru


def _check_references(turn: Locator, cited: str, also: str) -> None:
    """Two cited sources numbered 1 and 2 (as the text's markers), two more folded away, the copy named once."""
    expect(turn.locator("a.cite")).to_have_text(["1", "2"])
    expect(turn.locator(f"{cited} > li")).to_have_count(2)
    expect(turn.locator(f"{cited} > li .ref-n")).to_have_text(["[1]", "[2]"])
    details = turn.locator(also)
    expect(details).not_to_have_attribute("open", re.compile(".*"))
    expect(details.locator("summary")).to_have_text("Also retrieved (2 sources not cited)")
    expect(details.locator("li")).to_have_count(2)
    expect(details.locator("li").first).to_be_hidden()
    titles = turn.locator("li > .ref-title").all_text_contents()
    assert len(titles) == 4 and sum(t.startswith("Retrying") for t in titles) == 1, titles
    expect(turn.locator(".ref-also")).to_have_text(re.compile(r"^also in Retrying \(copy\)"))
    details.locator("summary").click()
    expect(details.locator("li").first).to_be_visible()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_guru_page_and_dashboard_show_cited_sources_and_fold_the_rest(
    page: Page, asgi_live_server: str, retry_guru: Guru, citing_llm: OpenAIFakeServer, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    page.goto(f"{asgi_live_server}/g/retries/")
    page.get_by_label("Ask Retry Guru a question").fill(QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()
    turn = page.locator("#thread .turn").first
    expect(turn.locator(".answer")).not_to_have_class(re.compile(r"\bstreaming\b"), timeout=30_000)
    expect(turn.locator(".answer")).to_have_text(
        "Call self.retry() inside the task 1. Cap the attempts with max_retries 2.")
    _check_references(turn, "ol.reference-list", "details.also-retrieved")
    turn.locator("a.cite").nth(1).click()
    expect(page).to_have_url(re.compile(r"#ref-1-2$"))
    screenshot("guru-page")
    assert page_errors == []

    question = Question.objects.get()
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)
    log_in_as(page, asgi_live_server, staff)
    page.goto(f"{asgi_live_server}/dashboard/g/retries/questions/{question.pk}/")
    expect(page.locator(".dq-answer a.cite")).to_have_text(["1", "2"])
    expect(page.locator("ol.dq-references > li")).to_have_count(2)
    also = page.locator("details.dq-also-retrieved")
    expect(also.locator("summary")).to_have_text("Also retrieved (2 not cited)")
    expect(also.locator("li").first).to_be_hidden()
    also.locator("summary").click()
    expect(also.locator("li")).to_have_count(2)
    expect(page.locator(".dq-also-in")).to_have_text(re.compile(r"^also in Retrying \(copy\)"))
    screenshot("dashboard")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_widget_shows_cited_sources_and_folds_the_rest(
    page: Page, asgi_live_server: str, retry_guru: Guru, citing_llm: OpenAIFakeServer,
    host_sites: Callable[[], HostSite], screenshot: Callable[..., Path],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=retry_guru, allowed_origins=[site.origin])
    page.goto(site.page("index.html", asgi_live_server, widget.key))
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Retry Guru")).to_be_visible()
    ask_in_widget(page, QUESTION, 1)
    turn = wait_finished(page, 1)
    _check_references(turn, ".refs ol", ".refs details.also-retrieved")
    screenshot("widget")
    # Drawn again from sessionStorage on the next page: the same split.
    page.reload()
    page.get_by_role("button", name="Ask AI").click()
    _check_references(wait_finished(page, 1), ".refs ol", ".refs details.also-retrieved")
