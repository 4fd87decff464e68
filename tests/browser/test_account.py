"""Accounts in Chromium: a maintainer changes their password and logs in with it; repeated failures are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.factories import UserFactory
from tests.support.browser import playwright_sync_api, submit_login_form

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect
PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "violet kettle 1987 drum"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_maintainer_changes_their_password(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    UserFactory(username="ana")
    base = asgi_live_server
    page.goto(f"{base}/accounts/login/")
    submit_login_form(page, "ana", PASSWORD)
    page.get_by_role("link", name="Password").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Change your password")
    page.get_by_label("Old password").fill(PASSWORD)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    screenshot("form")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password was changed.")
    page.get_by_role("button", name="Log out ana").click()
    page.goto(f"{base}/accounts/login/")
    submit_login_form(page, "ana", NEW_PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your gurus")
    assert page_errors == []


def test_repeated_failures_are_refused_even_with_the_right_password(
    page: Page, asgi_live_server: str, settings: SettingsWrapper, screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 2
    UserFactory(username="bo")
    page.goto(f"{asgi_live_server}/accounts/login/")
    for guess in ("hunter2", "letmein"):
        submit_login_form(page, "bo", guess)
        expect(page.get_by_text("Please try again")).to_be_visible()
    submit_login_form(page, "bo", PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Too many failed log-ins")
    screenshot("blocked")
    cache.clear()
