"""The maintainer's main journey in Chromium: log in, create a guru, add a website, watch it index, ask, review.

A real Celery worker runs in a thread (memory broker), so adding a source returns at once and the
sources page shows the run progressing until it is indexed, as it does in production.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Question
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceStatus
from tests.factories import GuruFactory, UserFactory
from tests.fakes.site_server import SiteFake
from tests.support.browser import playwright_sync_api, submit_login_form

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect
PASSWORD = "correct horse battery staple"
QUESTION = "How do I install widgets with pip?"
# Records every state the sources table shows, so the test can tell it watched progress, not a final page.
WATCH_PROGRESS_JS = """() => {
  window.__states = [];
  const row = document.querySelector("tr[data-source-id]");
  const take = () => window.__states.push({
    status: row.querySelector("[data-field=status]").textContent.trim(),
    percent: row.querySelector("[data-field=bar]").getAttribute("aria-valuenow"),
    counts: row.querySelector("[data-field=counts]").textContent.trim()});
  take();
  new MutationObserver(take).observe(row, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/")
    expect(page).to_have_url(f"{base}/accounts/login/?next=/")
    submit_login_form(page, username, PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your gurus")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_maintainer_journey(
    page: Page, asgi_live_server: str, live_celery_worker: None, fake_site: SiteFake, settings: SettingsWrapper,
    page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the documentation site is served on loopback
    fake_site.page_delay = 0.4
    base = asgi_live_server
    UserFactory(username="ana", password=PASSWORD)

    _log_in(page, base, "ana")
    screenshot("logged-in")

    page.get_by_role("link", name="New guru").click()
    page.get_by_label("Name").fill("Widgets Guru")
    page.get_by_label("Slug").fill("widgets")
    page.get_by_label("Domain knowledge").fill("The Widgets Python client: installing and configuring it")
    screenshot("new-guru")
    page.get_by_role("button", name="Create guru").click()
    expect(page).to_have_url(f"{base}/dashboard/g/widgets/sources/")
    expect(page.get_by_role("heading", name="Widgets Guru", level=1)).to_be_visible()

    adder = page.locator("#add-website")
    if adder.get_attribute("open") is None:
        adder.locator("summary").click()
    adder.locator("input[type=url]").fill(f"{fake_site.base_url}/sitemap_index.xml")
    adder.locator("input[value=sitemap]").check()
    adder.get_by_role("button", name="Add").click()
    row = page.locator("tr[data-source-id]")
    expect(row).to_have_count(1)
    page.evaluate(WATCH_PROGRESS_JS)
    screenshot("indexing")
    expect(row.locator("[data-field=status]")).to_have_text("Indexed", timeout=30_000)
    expect(row.locator("[data-field=chunks]")).not_to_have_text("0")
    screenshot("indexed")
    states = page.evaluate("window.__states")
    assert states[0]["status"] in ("Pending", "Processing"), states
    percents = [int(s["percent"]) for s in states if s["percent"] is not None]
    assert any(0 < p < 100 for p in percents) and percents[-1] == 100, states
    source = DataSource.objects.get(guru__slug="widgets")
    assert source.status == SourceStatus.INDEXED and source.progress_done == source.progress_total >= 4

    page.goto(f"{base}/g/widgets/")
    page.get_by_label("Ask Widgets Guru a question").fill(QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.locator("#thread .turn:last-child .answer")
    expect(answer).not_to_have_class("streaming", timeout=30_000)
    expect(answer).not_to_be_empty()
    screenshot("asked")

    page.goto(f"{base}/dashboard/g/widgets/questions/")
    expect(page.get_by_role("link", name=QUESTION)).to_be_visible()
    page.get_by_role("link", name=QUESTION).click()
    expect(page.get_by_role("heading", name=QUESTION)).to_be_visible()
    screenshot("question-detail")
    assert Question.objects.filter(guru__slug="widgets").count() == 1
    assert page_errors == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_visitors_are_sent_to_login_and_maintainers_only_see_their_gurus(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    base = asgi_live_server
    theirs: Guru = GuruFactory(slug="bobs-guru", name="Bob's guru")
    theirs.maintainers.add(UserFactory(username="bob", password=PASSWORD))
    mine: Guru = GuruFactory(slug="anas-guru", name="Ana's guru")
    mine.maintainers.add(UserFactory(username="ana", password=PASSWORD))

    for path in ["/dashboard/g/bobs-guru/sources/", "/dashboard/g/bobs-guru/questions/"]:
        page.goto(f"{base}{path}")
        expect(page).to_have_url(f"{base}/accounts/login/?next={path}")

    _log_in(page, base, "ana")
    expect(page.get_by_role("link", name="Ana's guru")).to_be_visible()
    expect(page.get_by_text("Bob's guru")).to_have_count(0)
    for path in ["/dashboard/g/bobs-guru/", "/dashboard/g/bobs-guru/sources/", "/dashboard/g/bobs-guru/questions/",
                 "/dashboard/g/bobs-guru/channels/", "/dashboard/g/bobs-guru/analytics/"]:
        response = page.goto(f"{base}{path}")
        assert response is not None and response.status == 404, path
    screenshot("isolation-404")
    assert [e for e in page_errors if "404" not in e] == []
