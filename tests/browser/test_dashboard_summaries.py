"""Summaries in the dashboard in Chromium: the Overview card shows the guru's summary; Suggest drafts questions, the
maintainer edits one and approves, and the public guru page then suggests exactly what was approved. The Sources
table follows summarising as it follows indexing, and shows the summary's preview when it is written."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache

from backend.gurus.examples import guru_example_texts
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceStatus, Summarization, SummaryState
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.support.browser import log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SUMMARY = ("Celery is a distributed task queue for Python. Workers execute tasks sent through a broker such as "
           "RabbitMQ or Redis. Tasks can be retried after a failure, scheduled periodically with beat, and chained "
           "into workflows with canvas primitives. Results are stored in a result backend.")
EDITED = "How do I retry a task that failed?"


def _summarised_guru() -> Guru:
    """A one-source guru whose source summary is also the guru's summary (rows made directly)."""
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru", domain_knowledge="Celery.")
    source = DataSourceFactory(guru=guru, title="Celery documentation", status=SourceStatus.INDEXED,
                               chunk_count=4, summary_state=SummaryState.DONE)
    root = Summarization.objects.create(guru=guru, source=source, level=1, position=0, text=SUMMARY,
                                        model="test-model", is_source_root=True, is_root=True)
    Summarization.objects.create(guru=guru, source=source, level=0, position=0, parent=root, model="test-model",
                                 text="Workers execute tasks sent through a broker.")
    return guru


def test_suggest_edit_approve_and_the_guru_page_suggests_it(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    guru = _summarised_guru()
    maintainer = UserFactory(username="ana")
    guru.maintainers.add(maintainer)
    log_in_as(page, asgi_live_server, maintainer)

    page.goto(f"{asgi_live_server}/dashboard/g/celery/")
    card = page.locator("#summary")
    expect(card.locator("[data-summary-text]")).to_have_text(SUMMARY)
    expect(card).to_contain_text("covers 1 of 1 source")
    expect(card.locator("[data-summary-spend]")).to_contain_text("0 of 1,000,000 tokens")
    screenshot("summary-card")

    card.get_by_role("button", name="Suggest").click()
    draft = page.locator("#suggestion")
    expect(draft.get_by_role("heading", name="Suggestion from the summary")).to_be_visible()
    expect(draft).to_contain_text("added after the 0 existing examples")
    first = draft.get_by_label("Question 1", exact=True)
    expect(first).not_to_have_value("")
    second = draft.get_by_label("Question 2", exact=True).input_value()
    first.fill(EDITED)
    # Keep the first two, untick the rest: only what is ticked is approved.
    boxes = draft.locator('input[type="checkbox"][name^="keep_"]')
    for index in range(2, boxes.count()):
        boxes.nth(index).uncheck()
    draft.get_by_label("Domain knowledge", exact=True).fill("Celery, the distributed task queue for Python.")
    screenshot("suggestion-draft")
    draft.get_by_role("button", name="Approve").click()

    expect(page.locator(".message.success")).to_contain_text("Added 2 example questions")
    examples = page.locator("#examples")
    expect(examples.get_by_label("Example question 1")).to_have_value(EDITED)
    expect(examples.get_by_label("Example question 2")).to_have_value(second)
    expect(page.get_by_label("Domain knowledge")).to_have_value("Celery, the distributed task queue for Python.")
    assert guru_example_texts(guru=guru) == [EDITED, second]

    visitor = page.context.browser.new_context()  # type: ignore[union-attr]
    public = visitor.new_page()
    public.goto(f"{asgi_live_server}/g/celery/")
    expect(public.locator(".example-chip")).to_have_text([EDITED, second])
    public.locator(".example-chip").first.click()
    expect(public.get_by_label("Ask Celery Guru a question")).to_have_value(EDITED)
    visitor.close()
    assert page_errors == []


def test_the_sources_table_follows_summarising_and_shows_the_preview_without_reload(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru")
    maintainer = UserFactory(username="ana")
    guru.maintainers.add(maintainer)
    source = DataSourceFactory(guru=guru, title="Celery documentation", status=SourceStatus.INDEXED, chunk_count=4,
                               summary_state=SummaryState.RUNNING, summary_done=2, summary_total=5)
    log_in_as(page, asgi_live_server, maintainer)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    row = page.locator(f'tr[data-source-id="{source.pk}"]')
    state = row.locator('[data-field="summary_state"]')
    expect(state).to_have_text("summarising 2/5")
    expect(row.locator('[data-field="summary_line"]')).to_be_hidden()
    bar = row.locator('[data-field="bar"]')
    expect(bar).to_be_hidden()  # indexed before the page opened: polling its summary draws no indexing bar

    DataSource.objects.filter(pk=source.pk).update(summary_done=4)
    expect(state).to_have_text("summarising 4/5")
    Summarization.objects.create(guru=guru, source=source, level=1, position=0, text=SUMMARY, model="test-model",
                                 is_source_root=True, is_root=True)
    DataSource.objects.filter(pk=source.pk).update(summary_state=SummaryState.DONE, summary_done=5)
    preview = row.locator('[data-field="summary_preview"]')
    expect(preview).to_be_visible()
    expect(preview).to_have_text(re.compile(r"^Celery is a distributed task queue for Python\..*…$"))
    expect(state).to_have_text("")
    expect(row).to_have_attribute("data-summary-active", "0")
    expect(bar).to_be_hidden()
    screenshot("sources-summary")

    preview.click()
    expect(page.locator("#summary [data-summary-text]")).to_have_text(SUMMARY)
    expect(page.locator("#summary [data-summary-label]")).to_contain_text("Summary by test-model")
    assert page_errors == []
