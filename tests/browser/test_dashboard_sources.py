"""The sources page in Chromium: progress bars update in place while indexing; dropped PDFs wait for Upload."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone

from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.fakes.pdfs import write_pdf
from tests.support.browser import log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DROP_JS = """([data, name]) => {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, {type: "application/pdf"}));
  const zone = document.querySelector("[data-dropzone]");
  for (const type of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
  }
}"""


def _log_in(page: Page, base: str) -> Guru:
    cache.clear()  # cache-backed locks and counters are not reset by the test database
    user = UserFactory(username="maintainer")
    guru: Guru = GuruFactory(slug="celery", name="Celery")  # autocommit: its collection is created at once
    guru.maintainers.add(user)
    log_in_as(page, base, user)
    return guru


def test_progress_bar_and_status_update_without_reload(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    guru = _log_in(page, asgi_live_server)
    source = DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, status=SourceStatus.PROCESSING,
                               progress_done=3, progress_total=10,
                               indexing_started_at=timezone.now() - timedelta(seconds=30))
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "progress.json" in request.url else None)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    row = page.locator(f'tr[data-source-id="{source.pk}"]')
    bar = row.locator('[data-field="bar"]')
    expect(row.locator('[data-field="status"]')).to_have_text("Processing")
    expect(bar).to_have_attribute("aria-valuenow", "30")
    expect(row.locator('[data-field="counts"]')).to_have_text("3/10")
    expect(row.locator('[data-field="eta"]')).to_have_text(re.compile(r"^~\d+ (s|min) left$"))
    screenshot("processing")

    DataSource.objects.filter(pk=source.pk).update(progress_done=7)
    expect(bar).to_have_attribute("aria-valuenow", "70")
    expect(row.locator('[data-field="counts"]')).to_have_text("7/10")

    DataSource.objects.filter(pk=source.pk).update(progress_done=10, status=SourceStatus.INDEXED, chunk_count=42,
                                                   last_indexed_at=timezone.now(), title="Installing Widgets")
    expect(row.locator('[data-field="status"]')).to_have_text("Indexed")
    expect(row.locator('[data-field="status"]')).to_have_class("badge ok")
    expect(bar).to_have_attribute("aria-valuenow", "100")
    expect(bar.locator("span")).to_have_attribute("style", re.compile(r"width: 100%"))
    expect(row.locator('[data-field="chunks"]')).to_have_text("42")
    expect(row.locator('[data-field="title"]')).to_have_text("Installing Widgets")
    expect(row.locator('[data-field="last_indexed"]')).to_have_text("just now")
    expect(row).to_have_attribute("data-active", "0")
    screenshot("indexed")

    # Idle now: the poller stops asking every second.
    seen = len(polls)
    time.sleep(2.5)
    assert len(polls) == seen and seen >= 3

    # A re-index started elsewhere (another tab, the API, the scheduler) shows when the tab regains focus.
    DataSource.objects.filter(pk=source.pk).update(status=SourceStatus.PROCESSING, progress_done=1, progress_total=4,
                                                   indexing_started_at=timezone.now())
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(row.locator('[data-field="status"]')).to_have_text("Processing")
    expect(bar).to_have_attribute("aria-valuenow", "25")
    expect(row).to_have_attribute("data-active", "1")
    assert page_errors == []


def test_dropped_pdfs_are_reviewed_before_the_upload_click(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path], tmp_path: Path,
) -> None:
    _log_in(page, asgi_live_server)
    lines = [[f"Line {i}: brokers keep messages until workers acknowledge them." for i in range(30)]]
    guide, notes = write_pdf(tmp_path / "broker-guide.pdf", lines), write_pdf(tmp_path / "notes.pdf", [["Draft."]])
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    expect(page.locator(".empty")).to_contain_text("No sources yet")
    page.locator("#add-pdf > summary").click()
    expect(page.locator("[data-dropzone]")).to_be_visible()
    screenshot("before-drop")
    uploads: list[str] = []
    page.on("request", lambda request: uploads.append(request.url) if request.method == "POST" else None)
    for pdf in (guide, notes):  # two drops: the second adds to the first
        page.evaluate(DROP_JS, [base64.b64encode(pdf.read_bytes()).decode(), pdf.name])
    files = page.locator("[data-dropzone-files] li")
    expect(files).to_have_count(2)
    expect(files.nth(0)).to_contain_text("broker-guide.pdf")
    expect(files.nth(0).locator(".file-size")).to_have_text(re.compile(r"\d+(\.\d)? (B|KB)"))
    expect(page.locator("[data-dropzone-status]")).to_contain_text("2 files ready")
    files.nth(1).get_by_role("button", name="Remove notes.pdf").click()
    expect(files).to_have_count(1)
    page.locator("#add-pdf input[type=checkbox][name$=private]").check()
    screenshot("reviewed")
    assert uploads == [] and not DataSource.objects.exists()  # nothing is sent before the click
    with page.expect_navigation():
        page.locator("#add-pdf").get_by_role("button", name="Upload").click()
    expect(page.locator(".message.success")).to_have_text("Added 1 PDF: broker-guide.pdf.")
    row = page.locator("table.sources tbody tr[data-source-id]")
    expect(row).to_have_count(1)
    expect(row.locator('[data-field="title"]')).to_have_text("broker-guide.pdf")
    expect(row.locator('[data-field="status"]')).to_have_text("Indexed")  # eager tasks ran at commit
    screenshot("after-upload")
    source = DataSource.objects.get()
    assert source.kind == SourceKind.PDF and source.status == SourceStatus.INDEXED and source.chunk_count > 0
    assert source.private
    assert page_errors == []
