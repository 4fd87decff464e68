"""The Sources tab's Git form in Chromium: any host, refusals shown inline at submit, an allowed repository indexed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from tests.factories import GuruFactory, UserFactory
from tests.support.browser import log_in_as, playwright_sync_api
from tests.support.git_servers import HOSTED, GitHosting

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _submit(page: Page, url: str) -> None:
    page.locator("#add-github > summary").click() if not page.locator("#id_gh-url").is_visible() else None
    page.fill("#id_gh-url", url)
    with page.expect_navigation():
        page.locator("#add-github button[type=submit]").click()


def test_a_git_repository_from_any_host_is_checked_when_added(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
    git_hosts: GitHosting, settings: SettingsWrapper,
) -> None:
    cache.clear()  # cache-backed locks and counters are not reset by the test database
    user = UserFactory(username="maintainer")
    guru: Guru = GuruFactory(slug="celery", name="Celery")
    guru.maintainers.add(user)
    log_in_as(page, asgi_live_server, user)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/sources/")
    expect(page.locator("#add-github > summary")).to_have_text("Git repository")
    expect(page.locator(".empty")).to_contain_text("a Git repository above")
    page.locator("#add-github > summary").click()
    expect(page.locator("#add-github")).to_contain_text("GitLab, Gitea/Forgejo, Bitbucket")

    _submit(page, f"{git_hosts.http.base_url}/group/missing.git")
    errors = page.locator("#add-github .errorlist")
    expect(errors).to_contain_text("repository not found")
    expect(page.locator("#add-github")).to_have_attribute("open", "")
    expect(page.locator("#id_gh-url")).to_have_value(f"{git_hosts.http.base_url}/group/missing.git")
    screenshot("not-found")

    settings.OPENGURU_FETCH_ALLOWLIST = []  # the server's policy, as if started without the allow-list
    _submit(page, f"{git_hosts.http.base_url}/{HOSTED['gitlab']}")
    expect(errors).to_contain_text("only from hosts that OPENGURU_FETCH_ALLOWLIST names")
    expect(errors).to_contain_text("restart it after changing the list")
    screenshot("blocked")
    assert not DataSource.objects.exists()

    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1"]
    _submit(page, f"{git_hosts.http.base_url}/{HOSTED['gitlab']}")
    expect(page.locator(".message.success")).to_contain_text("Added")
    row = page.locator("table.sources tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator('[data-field="status"]')).to_have_text("Indexed")  # eager tasks ran at commit
    expect(row.locator('[data-field="title"]')).to_have_text("project")
    screenshot("indexed")
    source = DataSource.objects.get()
    assert (source.kind, source.status) == (SourceKind.GITHUB_REPO, SourceStatus.INDEXED)
    assert source.chunk_count > 0
    # The refused submissions answer 400 (the form shown again with its errors), which Chromium logs.
    assert [e for e in page_errors if "status of 400" not in e or "/sources/add/github/" not in e] == []
