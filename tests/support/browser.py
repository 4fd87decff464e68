"""Pytest plugin: headless system Chromium through Playwright (browser, page, page_errors, screenshot fixtures)."""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DEFAULT_TIMEOUT_MS = 15_000
VIEWPORT = {"width": 1280, "height": 900}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
MISSING_PACKAGE = "the playwright package is missing: pip install -r requirements-dev.txt"


def _unavailable(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skip loudly on a laptop; fail under CI=true so CI can never pass by skipping the browser tests."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"BROWSER TESTS CANNOT RUN: {reason} (CI=true forbids skipping them)", pytrace=False)
    pytest.skip(f"BROWSER TESTS SKIPPED: {reason}", allow_module_level=module_level)


def playwright_sync_api() -> ModuleType:
    """playwright.sync_api for a test module's top level; without the package, skip it (fail under CI=true)."""
    try:
        return importlib.import_module("playwright.sync_api")
    except ImportError:
        _unavailable(MISSING_PACKAGE, module_level=True)


def _ignore_loop_in_django_checks(playwright_loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Keep Django's async-safety check from mistaking Playwright's loop for an async context.

    The sync API runs its event loop in a greenlet of the main thread, so `asyncio.get_running_loop()`
    finds it from test code and every ORM call would raise SynchronousOnlyOperation. Only that one loop
    is ignored: the check still guards other loops, such as the live ASGI server's. Returns an undo.
    """
    import django.utils.asyncio as django_asyncio

    original = django_asyncio.get_running_loop

    def get_running_loop() -> asyncio.AbstractEventLoop:
        loop = original()
        if loop is playwright_loop:
            raise RuntimeError("no running event loop (only Playwright's sync-API loop)")
        return loop

    django_asyncio.get_running_loop = get_running_loop

    def undo() -> None:
        django_asyncio.get_running_loop = original

    return undo


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium (the Debian package, not a Playwright download), one per test module.

    Module scope, not session: while Playwright runs, its event loop occupies the main thread, and
    later tests that call async code synchronously (Django's test client on async views) would fail.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable(MISSING_PACKAGE)
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing: apt-get install chromium")
    manager = sync_playwright().start()
    undo = _ignore_loop_in_django_checks(asyncio.get_running_loop())
    try:
        launched = manager.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
    finally:
        manager.stop()
        undo()


@pytest.fixture
def page_errors() -> list[str]:
    """Uncaught JavaScript errors and console errors of the test's page, in order."""
    return []


@pytest.fixture
def page(browser: Browser, page_errors: list[str]) -> Iterator[Page]:
    """A fresh browser context and page per test; every wait times out after 15 s."""
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    new_page = context.new_page()
    new_page.on("pageerror", lambda error: page_errors.append(f"pageerror: {error}"))
    new_page.on("console", lambda message: _record_console_error(message, page_errors))
    try:
        yield new_page
    finally:
        context.close()


def _record_console_error(message: ConsoleMessage, errors: list[str]) -> None:
    """Console errors with the URL they are about; a missing /favicon.ico (no icon link in base.html) is noise."""
    if message.type != "error":
        return
    url = message.location.get("url", "")
    if url.endswith("/favicon.ico"):
        return
    errors.append(f"console: {message.text} ({url})" if url else f"console: {message.text}")


def save_screenshot(page: Page, name: str, **options: Any) -> Path:
    """Save a full-page PNG as test-artifacts/<name>.png at the repo root (gitignored) and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
    page.screenshot(path=str(path), full_page=True, **options)
    return path


@pytest.fixture
def screenshot(page: Page, request: pytest.FixtureRequest) -> Callable[..., Path]:
    """save_screenshot for this test's page, named <test name>-<label>; options go to page.screenshot."""

    def take(label: str, **options: Any) -> Path:
        return save_screenshot(page, f"{request.node.name}-{label}", **options)

    return take


def log_in_as(page: Page, base_url: str, user: Any) -> None:
    """Sign the browser in as `user` without the login form: a session made by Django's test client."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])


def submit_login_form(page: Page, username: str, password: str) -> None:
    """Fill and send the login page the browser is on."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def clipboard_text(page: Page, expected: str, timeout_s: float = 15.0) -> str:
    """What the clipboard holds once it holds `expected`, or when the wait ends: a copy button writes the
    clipboard asynchronously, and on a busy machine a read right after the click still sees the text an
    earlier test of the same browser copied. (wait_for_function does not await an async predicate.)"""
    deadline = time.monotonic() + timeout_s
    while True:
        held = str(page.evaluate("navigator.clipboard.readText()"))
        if held == expected or time.monotonic() > deadline:
            return held
        page.wait_for_timeout(50)
