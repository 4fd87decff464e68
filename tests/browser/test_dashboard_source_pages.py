"""Chromium: a sitemap's name, pages and searchable chunks; the Sources header counts follow the rows live."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.browser.test_dashboard_sources import _log_in  # the same maintainer and guru ("celery")
from tests.factories import DataSourceFactory
from tests.fakes.site_server import SiteFake
from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_sitemap_shows_its_name_its_pages_and_its_searchable_chunks(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
    fake_site: SiteFake, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    guru = _log_in(page, asgi_live_server)
    source = source_create(guru=guru, kind=SourceKind.WEBSITE, url=f"{fake_site.base_url}/sitemap-three.xml",
                           options={"mode": "sitemap"})  # indexed at once: tasks are eager, the commit is now
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    row = page.locator(f'tr[data-source-id="{source.pk}"]')
    expect(row.locator('[data-field="title"]')).to_have_text(f"{urlsplit(fake_site.base_url).netloc} sitemap")
    pages = row.locator("[data-pages]")
    expect(pages.locator("table")).to_be_hidden()
    pages.locator("summary").click()
    expect(pages.locator("tbody tr")).to_have_count(3)
    expect(pages.locator("tbody tr").nth(1)).to_contain_text("Plans and limits")
    expect(pages.locator("tbody tr").nth(1)).to_contain_text("Indexed")
    screenshot("sources-tab-pages")

    row.locator('[data-field="title"]').click()
    expect(page.locator("[data-source-title]")).to_have_text(source.title)
    chunks = page.locator("[data-chunks] li.chunk")
    expect(chunks).to_have_count(min(source.chunk_count, 20))
    expect(chunks.first.locator("a")).to_have_attribute("href", f"{fake_site.base_url}/docs/install")
    screenshot("source-chunks")
    page.get_by_label("Search this source's chunks").fill("binary heap")
    page.get_by_role("button", name="Search").click()
    expect(chunks).to_have_count(1)
    expect(chunks.first).to_contain_text("binary heap")
    expect(chunks.first.locator("a")).to_have_attribute("href", f"{fake_site.base_url}/blog/scheduler")
    screenshot("source-chunks-search")
    page.get_by_label("Search this source's chunks").fill("How many writes per hour does the Team plan allow?")
    page.get_by_label("Score for this question").check()
    page.get_by_role("button", name="Search").click()
    expect(chunks.first.locator("[data-score]")).to_be_visible()
    expect(chunks.first).to_contain_text("50,000")
    screenshot("source-question")
    assert page_errors == []


def test_the_header_counts_follow_the_rows_live(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    guru = _log_in(page, asgi_live_server)
    DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, status=SourceStatus.INDEXED, chunk_count=3)
    source = DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, status=SourceStatus.PENDING)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    counts = page.locator("[data-counts]")
    expect(counts).to_have_text("2 in all · 1 indexed · 1 indexing · 0 failed")
    screenshot("pending")
    DataSource.objects.filter(pk=source.pk).update(status=SourceStatus.PROCESSING, progress_done=1, progress_total=2,
                                                   indexing_started_at=timezone.now())
    expect(page.locator(f'tr[data-source-id="{source.pk}"] [data-field="status"]')).to_have_text("Processing")
    expect(counts).to_have_text("2 in all · 1 indexed · 1 indexing · 0 failed")
    DataSource.objects.filter(pk=source.pk).update(status=SourceStatus.INDEXED, progress_done=2, chunk_count=5,
                                                   last_indexed_at=timezone.now())
    expect(page.locator(f'tr[data-source-id="{source.pk}"] [data-field="status"]')).to_have_text("Indexed")
    expect(counts).to_have_text("2 in all · 2 indexed · 0 indexing · 0 failed")
    screenshot("indexed")
    assert page_errors == []
