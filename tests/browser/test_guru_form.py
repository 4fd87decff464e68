"""The New guru form in Chromium: the slug follows the name, the default colour shows, the icon group previews."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from backend.gurus.models import Guru
from tests.dashboard.test_gurus import PNG_1PX
from tests.factories import GuruFactory, UserFactory
from tests.support.browser import log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ICON_URL = "https://icons.example.com/celery.png"  # answered by page.route below: tests never leave the machine


def test_new_guru_form_slug_colour_and_icon(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path], tmp_path: Path,
) -> None:
    user = UserFactory(username="ana")
    GuruFactory(slug="celery-tasks", name="Someone else's").maintainers.add(UserFactory(username="bob"))
    log_in_as(page, asgi_live_server, user)

    def icon(route: Route) -> None:
        route.fulfill(status=200, content_type="image/png", body=PNG_1PX)

    page.route(f"{ICON_URL}*", icon)
    page.goto(f"{asgi_live_server}/dashboard/gurus/new/")
    name, slug = page.get_by_label("Name"), page.get_by_label("Slug")

    # The slug follows the name as it is typed, until it is edited by hand; cleared, it follows again.
    name.press_sequentially("Crème Tasks!")
    expect(slug).to_have_value("creme-tasks")
    slug.fill("my-own")
    name.fill("Celery Tasks")
    expect(slug).to_have_value("my-own")
    slug.fill("")
    name.press_sequentially(" ")
    expect(slug).to_have_value("celery-tasks")
    expect(page.get_by_label("Colour")).to_have_value("#1f6feb")

    # One Icon group: a URL previews at once; a chosen file replaces it in the preview (the upload wins).
    group = page.get_by_role("group", name="Icon")
    preview = group.get_by_role("img", name="Icon preview")
    expect(preview).to_be_hidden()
    group.get_by_label("Image URL").fill(ICON_URL)
    expect(preview).to_be_visible()
    expect(preview).to_have_attribute("src", ICON_URL)
    png = tmp_path / "logo.png"
    png.write_bytes(PNG_1PX)
    group.get_by_label("Upload an image").set_input_files(str(png))
    expect(preview).to_have_attribute("src", re.compile(r"^blob:"))
    page.get_by_label("Domain knowledge").fill("Celery task queues")
    screenshot("filled")

    # Created without typing a slug: the one shown is taken, so the server adds a number.
    page.get_by_role("button", name="Create guru").click()
    expect(page.locator(".message.success")).to_contain_text("Created Celery Tasks")
    guru = Guru.objects.get(name="Celery Tasks")
    assert guru.slug == "celery-tasks-2" and guru.base_color == "#1f6feb"
    assert guru.icon and guru.icon_url == ICON_URL
    expect(page).to_have_url(f"{asgi_live_server}/dashboard/g/celery-tasks-2/sources/")

    # The Overview tab shows the uploaded icon in the group; the public page uses it, not the URL.
    page.goto(f"{asgi_live_server}/dashboard/g/celery-tasks-2/")
    src = page.get_by_role("group", name="Icon").get_by_role("img", name="Icon preview").get_attribute("src") or ""
    assert src.startswith(f"/gurus/{guru.pk}/icon-")
    expect(page.get_by_label("Slug")).to_have_value("celery-tasks-2")
    screenshot("overview")
    page.goto(f"{asgi_live_server}/g/celery-tasks-2/")
    expect(page.locator(".guru-icon")).to_have_attribute("src", src)
    assert page_errors == []


def test_a_slug_typed_before_the_form_script_runs_is_kept(page: Page, asgi_live_server: str) -> None:
    """The script is deferred: someone already typing in the slug when it runs must keep what they type."""
    log_in_as(page, asgi_live_server, UserFactory(username="ana"))
    held = {"script": True}

    def script(route: Route) -> None:
        if held["script"]:
            route.abort()  # "not loaded yet"
        else:
            route.continue_()

    page.route("**/guru-form*.js", script)
    page.goto(f"{asgi_live_server}/dashboard/gurus/new/")
    src = page.locator("script[src*='guru-form']").get_attribute("src") or ""
    page.get_by_label("Name").fill("Widgets Guru")
    slug = page.get_by_label("Slug")
    slug.click()
    held["script"] = False
    page.add_script_tag(url=src)  # it runs now, with the slug focused and still empty
    slug.press_sequentially("widgets")
    expect(slug).to_have_value("widgets")
