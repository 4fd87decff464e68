"""The Discord card in Chromium: the portal steps, a token checked by (a fake) Discord, invite link, channels saved.

The card's screenshots are the README's images of the setup (docs/img/discord-setup.png, discord-connected.png).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from backend.gurus.models import Guru
from backend.integrations.models import Integration
from tests.dashboard.discord_support import ACME, APP_ID, FORUM, GENERAL, TOKEN
from tests.support.browser import clipboard_text, log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 16) | (1 << 35) | (1 << 38)  # the five the bot needs, by bit


def test_discord_setup_from_a_token_to_saved_channels(
    page: Page, asgi_live_server: str, guru: Guru, maintainer: Any, card_discord: Any,
    page_errors: list[str], screenshot: Callable[..., Path], readme_image: Callable[[str, str], Path],
) -> None:
    log_in_as(page, asgi_live_server, maintainer)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/integrations/#discord")
    card = page.locator("#discord")
    expect(card.locator("header .badge")).to_have_text("not connected")
    expect(card.get_by_role("link", name="Discord Developer Portal ↗")).to_have_attribute(
        "href", "https://discord.com/developers/applications")
    expect(card.get_by_role("heading", name="Turn on the Message Content intent")).to_be_visible()
    screenshot("not-connected")
    readme_image("#discord", "discord-setup.png")

    # A token Discord does not know is refused with what to do; the field comes back empty.
    card.get_by_label("Bot token").fill("MTExMTExMTExMTExMTExMTEx.Gwrong.nobody-knows-this-one")
    card.get_by_role("button", name="Connect").click()
    expect(card.locator(".errorlist")).to_contain_text("Discord did not accept the token (401)")
    expect(card.get_by_label("Bot token")).to_have_value("")
    card.get_by_label("Bot token").fill(TOKEN)
    card.get_by_role("button", name="Connect").click()

    expect(page.locator(".message.success")).to_contain_text("Connected the Discord bot “Celery Guru”")
    expect(card.locator("header .badge")).to_have_text("connected")
    expect(card.locator("#discord-last-event")).to_contain_text("no event yet")
    expect(card.locator("#discord-guilds")).to_contain_text("The bot is in Acme, Beta.")
    invite = card.get_by_role("link", name="Add the bot to a server ↗")
    query = parse_qs(urlsplit(invite.get_attribute("href") or "").query)
    assert query["client_id"] == [APP_ID] and query["permissions"] == [str(PERMISSIONS)]
    copy = card.get_by_role("button", name="Copy the invite link")
    copy.click()
    expect(copy).to_have_text("Copied")
    link = invite.get_attribute("href") or ""
    assert clipboard_text(page, link) == link

    card.get_by_label("When to answer in general").select_option("mention")
    card.get_by_label("When to answer in questions").select_option("auto")
    expect(card.get_by_label("Answer direct messages")).not_to_be_checked()
    card.get_by_role("button", name="Save").click()

    expect(page.locator(".message.success")).to_have_text("Saved: the bot answers in 2 channels (and their threads).")
    expect(card.get_by_label("When to answer in general")).to_have_value("mention")
    expect(card.get_by_label("When to answer in questions")).to_have_value("auto")
    expect(card.get_by_label("When to answer in announcements")).to_have_value("off")
    integration = Integration.objects.get()
    assert [(c["id"], c["mode"], c["guild_id"], c["kind"]) for c in integration.channels] == [
        (GENERAL, "mention", ACME, "text"), (FORUM, "auto", ACME, "forum")]
    assert integration.allow_dm is False
    assert TOKEN not in page.content() and TOKEN.split(".")[-1] not in page.content()
    page.locator("#discord").scroll_into_view_if_needed()
    screenshot("connected")
    readme_image("#discord", "discord-connected.png")
    assert page_errors == []
