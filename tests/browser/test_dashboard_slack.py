"""The Slack card in Chromium: manifest copied, tokens pasted, checked by (a fake) Slack, a channel allowed and saved.

The screenshots are the README's images of the setup (docs/img/slack-setup.png, docs/img/slack-connected.png).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from backend.gurus.models import Guru
from backend.integrations.models import Integration, Transport
from tests.dashboard.slack_support import SIGNING_SECRET
from tests.fakes.slack_server import FakeSlack
from tests.support.browser import clipboard_text, log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

def test_slack_setup_from_not_connected_to_a_saved_channel(
    page: Page, asgi_live_server: str, guru: Guru, maintainer: Any, card_slack: FakeSlack,
    page_errors: list[str], screenshot: Callable[..., Path], readme_image: Callable[[str, str], Path],
) -> None:
    log_in_as(page, asgi_live_server, maintainer)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/integrations/")
    card = page.locator("#slack")
    expect(card.locator(".badge")).to_have_text("not connected")

    # Socket Mode asks for the app-level token and makes a manifest without request URLs; back to the Events API.
    card.get_by_role("link", name="Socket Mode").click()
    expect(card.get_by_label("App-level token")).to_be_visible()
    assert json.loads(card.locator("#slack-manifest").input_value())["settings"]["socket_mode_enabled"] is True
    card.get_by_role("link", name="Events API").click()
    expect(card.get_by_role("button", name="Add to Slack")).to_be_visible()

    manifest = card.locator("#slack-manifest").input_value()
    urls = json.loads(manifest)["settings"]
    assert urls["event_subscriptions"]["request_url"] == f"{asgi_live_server}/integrations/slack/events/"
    screenshot("not-connected")
    readme_image("#slack", "slack-setup.png")
    copy = card.get_by_role("button", name="Copy the manifest")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard_text(page, manifest) == manifest
    create = card.get_by_role("link", name="Create it at Slack ↗")
    expect(create).to_have_attribute("href", re.compile(r"^https://api\.slack\.com/apps\?new_app=1&manifest_json="))

    # Step 2 (a): a wrong token is refused with Slack's answer; the fields come back empty.
    paste = card.locator("form.slack-paste")
    paste.get_by_label("Bot token").fill("xoxb-not-known-to-slack")
    paste.get_by_label("Signing secret").fill(SIGNING_SECRET)
    paste.get_by_role("button", name="Connect").click()
    expect(paste.locator(".errorlist")).to_contain_text("Slack did not accept the token: invalid_auth.")
    expect(paste.get_by_label("Bot token")).to_have_value("")
    paste.get_by_label("Bot token").fill(card_slack.bot_token)
    paste.get_by_label("Signing secret").fill(SIGNING_SECRET)
    paste.get_by_role("button", name="Connect").click()

    expect(page.locator(".message.success")).to_contain_text("Connected to the Slack workspace “Acme”")
    expect(card.locator("header .badge")).to_have_text("connected")
    expect(card.locator("#slack-last-event")).to_have_text("no event yet — invite the bot to a channel and @mention it")
    card.get_by_label("#support").check()
    card.get_by_label("When to answer in support").select_option("auto")
    card.get_by_role("button", name="Save").click()

    expect(page.locator(".message.success")).to_have_text("Saved: the bot answers in 1 channel.")
    expect(card.get_by_label("#support")).to_be_checked()
    expect(card.get_by_label("#general")).not_to_be_checked()
    expect(card.get_by_label("When to answer in support")).to_have_value("auto")
    integration = Integration.objects.get()
    assert integration.transport == Transport.EVENTS
    assert integration.channels == [{"id": "C0SUPPORT", "name": "support", "mode": "auto"}]
    content = page.content()
    for secret in (card_slack.bot_token, SIGNING_SECRET, "xoxb-"):
        assert secret not in content
    screenshot("connected")
    readme_image("#slack", "slack-connected.png")
    assert page_errors == []
