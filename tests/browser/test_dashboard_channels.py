"""The channels page in Chromium: copy buttons, a new API key shown once, and the live widget preview answering."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import AbstractUser
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from backend.api.models import APIKey
from backend.api.services import api_key_hash
from backend.gurus.models import Guru
from backend.sources.models import SourceKind, SourceStatus
from backend.sources.services import source_create
from backend.widget.models import WidgetId
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import write_pdf
from tests.support.browser import clipboard_text, log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CORPUS = [["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
           "The countdown argument sets how many seconds to wait before the retry."]]
QUESTION = "How do I retry a task?"


@pytest.fixture
def maintainer() -> AbstractUser:
    return UserFactory(username="maria")


@pytest.fixture
def guru(tmp_path: Path, maintainer: AbstractUser) -> Guru:
    """A guru with one indexed PDF, answered by the offline answerer of the test settings."""
    cache.clear()  # rate-limit counters live in the cache, which transactions do not reset
    created: Guru = GuruFactory(slug="celery", name="Celery Guru", intro_text="Ask me about Celery tasks.")
    created.maintainers.add(maintainer)
    pdf = write_pdf(tmp_path / "celery-manual.pdf", CORPUS)
    upload = SimpleUploadedFile("celery-manual.pdf", pdf.read_bytes(), content_type="application/pdf")
    source = source_create(guru=created, kind=SourceKind.PDF, upload=upload, title="Celery manual")
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED, source.error_message
    return created


def test_snippet_copy_and_live_preview_answers(
    page: Page, asgi_live_server: str, guru: Guru, maintainer: AbstractUser, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    # The dashboard's own origin is deliberately not among the allowed origins: the preview works anyway.
    widget = WidgetId.objects.create(guru=guru, name="Docs site", allowed_origins=["https://docs.example.com"])
    log_in_as(page, asgi_live_server, maintainer)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/channels/")

    snippet = (f'<script async src="{asgi_live_server}/widget.js" id="guru-widget-id" '
               f'data-widget-id="{widget.key}"></script>')
    card = page.locator(f"#widget-{widget.pk}")
    expect(card.locator("pre.snippet")).to_have_text(snippet)
    copy = card.get_by_role("button", name="Copy the snippet of Docs site")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard_text(page, snippet) == snippet

    # The live preview: the real widget, loaded from this server, for this widget id.
    expect(page.locator("#preview-status")).to_have_text("Ready.")
    page.get_by_role("button", name="Open the widget").click()
    dialog = page.get_by_role("dialog", name="Celery Guru")
    expect(dialog).to_be_visible()
    expect(page.locator(".intro")).to_have_text("Ask me about Celery tasks.")
    box = page.get_by_label("Your question")
    box.fill(QUESTION)
    box.press("Enter")
    turn = page.locator(".turn").first
    expect(turn.locator(".q")).to_have_text(QUESTION)
    expect(turn.locator(".md")).to_have_attribute("aria-busy", "false", timeout=30_000)
    expect(turn.locator(".notice.error")).to_have_count(0)
    expect(turn.locator(".md")).to_contain_text("retr")
    expect(turn.locator(".refs li").first).to_contain_text("Celery manual")
    screenshot("preview-answered")
    assert page_errors == []


def test_a_new_key_is_shown_once_and_a_reload_does_not_repeat_it(
    page: Page, asgi_live_server: str, guru: Guru, maintainer: AbstractUser, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    log_in_as(page, asgi_live_server, maintainer)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/channels/")
    expect(page.locator("#preview")).to_contain_text("Create an active widget id")
    page.get_by_label("Name").first.fill("CI bot")
    page.get_by_role("button", name="Create key").click()

    shown = page.locator("#new-key-value")
    expect(shown).to_be_visible()
    raw = (shown.text_content() or "").strip()
    assert APIKey.objects.get().key_hash == api_key_hash(raw)
    page.get_by_role("button", name="Copy key").click()
    assert clipboard_text(page, raw) == raw
    expect(page.locator("#new-key-curl")).to_contain_text(f'-H "X-API-KEY: {raw}"')
    screenshot("key-shown")

    # The address now names the channels page, so a reload asks for it again: no key, no second key.
    assert page.url == f"{asgi_live_server}/dashboard/g/celery/channels/#api-keys"
    page.reload()
    expect(page.locator("#api-keys")).to_contain_text("CI bot")
    expect(page.locator("#new-key-value")).to_have_count(0)
    assert raw not in page.content()
    assert APIKey.objects.count() == 1

    # Revoke, after confirming.
    page.get_by_text("Revoke…").click()
    page.get_by_role("button", name="Revoke “CI bot”").click()
    expect(page.locator(".message.success")).to_contain_text("Revoked “CI bot”")
    assert APIKey.objects.get().revoked_at is not None
    assert page_errors == []


def test_integrations_tab_says_what_this_install_offers(
    page: Page, asgi_live_server: str, maintainer: AbstractUser, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    GuruFactory(slug="plain", name="Plain Guru").maintainers.add(maintainer)
    log_in_as(page, asgi_live_server, maintainer)
    page.goto(f"{asgi_live_server}/dashboard/g/plain/")
    page.get_by_role("link", name="Integrations").click()
    body = page.locator(".dash-body")
    expect(body.locator("#slack")).to_contain_text("not connected")
    expect(body.locator("#discord")).to_contain_text("not connected")
    expect(body.locator("#discord")).to_contain_text("Message Content Intent")
    for promise in ["Coming soon", "their own issues", "will need"]:
        expect(body).not_to_contain_text(promise)
    available = body.locator("#available")
    expect(available).to_contain_text("The widget")
    expect(available).to_contain_text("The REST API")
    screenshot("integrations")
    available.get_by_role("link", name="Channels").first.click()
    expect(page).to_have_url(f"{asgi_live_server}/dashboard/g/plain/channels/#widgets")
    page.go_back()
    page.locator("#available").get_by_role("link", name=f"{asgi_live_server}/api/docs/").click()
    expect(page).to_have_url(f"{asgi_live_server}/api/docs/")
    expect(page.get_by_text("OpenGuru API").first).to_be_visible()
    assert page_errors == []
