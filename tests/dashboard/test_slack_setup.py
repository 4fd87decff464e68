"""The Slack card of the Integrations tab: manifest, pasted tokens, allow-list, health, disconnect — maintainers only.

The real setup services and slack_sdk's WebClient talk to a local fake Slack (tests/fakes/slack_server.py).
"""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.integrations.models import Integration, Transport
from tests.dashboard.slack_support import SIGNING_SECRET
from tests.factories import UserFactory
from tests.fakes.slack_server import FakeSlack

pytestmark = [pytest.mark.django_db]

TAB = "/dashboard/g/celery/integrations/"
CONNECT = TAB + "slack/connect/"
CHANNELS = TAB + "slack/channels/"
DISCONNECT = TAB + "slack/disconnect/"


def manifest_of(page: str) -> dict[str, Any]:
    found = re.search(r'<textarea id="slack-manifest"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, "no manifest on the page"
    loaded: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return loaded


def paste(client: Client, card_slack: FakeSlack, transport: str = Transport.EVENTS, **fields: str) -> Any:
    form = {"transport": transport, "paste-bot_token": card_slack.bot_token, "paste-signing_secret": SIGNING_SECRET,
            "paste-app_token": card_slack.app_token, **fields}
    return client.post(CONNECT, form)


def connected(client: Client, card_slack: FakeSlack, transport: str = Transport.EVENTS) -> Integration:
    response = paste(client, card_slack, transport)
    assert response.status_code == 302, response.content.decode()[-2000:]
    return Integration.objects.get()


def secrets_of(card_slack: FakeSlack) -> list[str]:
    return [card_slack.bot_token, card_slack.app_token, SIGNING_SECRET, card_slack.client_secret, "xoxb-", "xapp-"]


def test_not_connected_card_has_the_manifest_for_the_chosen_transport(client: Client, guru: Guru) -> None:
    page = client.get(TAB).content.decode()
    assert "no Slack bot" not in page and '<span class="badge">not connected</span>' in page
    manifest = manifest_of(page)
    settings_part = manifest["settings"]
    assert settings_part["event_subscriptions"]["request_url"] == "http://testserver/integrations/slack/events/"
    assert settings_part["interactivity"]["request_url"] == "http://testserver/integrations/slack/interactivity/"
    assert settings_part["socket_mode_enabled"] is False
    assert manifest["oauth_config"]["redirect_urls"] == ["http://testserver/dashboard/integrations/slack/oauth/callback/"]
    assert manifest["features"]["bot_user"]["display_name"] == "Celery Guru"
    assert 'href="https://api.slack.com/apps?new_app=1&amp;manifest_json=' in page
    assert 'name="paste-signing_secret"' in page and 'name="paste-app_token"' not in page
    assert 'name="oauth-client_id"' in page and "Add to Slack" in page

    page = client.get(TAB, {"transport": "socket"}).content.decode()
    manifest = manifest_of(page)
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in manifest["settings"]["event_subscriptions"]
    assert 'name="paste-app_token"' in page and 'name="paste-signing_secret"' not in page
    assert 'name="oauth-client_id"' not in page and "connections:write" in page
    assert 'value="socket"' in page  # the paste form posts the transport it was shown for


def test_pasted_tokens_are_checked_by_slack_and_never_shown_back(client: Client, guru: Guru,
                                                                 card_slack: FakeSlack) -> None:
    response = paste(client, card_slack, **{"paste-bot_token": "xoxp-a-user-token"})
    assert response.status_code == 200 and "starts with “xoxb-”" in response.content.decode()
    response = paste(client, card_slack, **{"paste-bot_token": "xoxb-not-known-to-slack"})
    page = response.content.decode()
    assert response.status_code == 200 and "Slack did not accept the token: invalid_auth." in page
    assert "xoxb-not-known-to-slack" not in page and SIGNING_SECRET not in page  # the inputs come back empty
    assert 'class="active" aria-current="page">Integrations</a>' in page  # still on the Integrations tab
    response = paste(client, card_slack, **{"paste-signing_secret": ""})
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    assert not Integration.objects.exists()

    response = paste(client, card_slack)
    assert response.status_code == 302 and response["Location"] == TAB + "#slack"
    integration = Integration.objects.get()
    assert (integration.workspace_name, integration.external_id, integration.bot_user_id) == (
        "Acme", card_slack.team_id, card_slack.bot_user_id)
    assert (integration.transport, integration.site_url) == (Transport.EVENTS, "http://testserver/")
    assert integration.access_token == card_slack.bot_token and integration.signing_secret == SIGNING_SECRET
    page = client.get(TAB).content.decode()
    assert "Connected to the Slack workspace “Acme”" in page and '<span class="badge ok">connected</span>' in page
    assert "Events API (HTTP)" in page and card_slack.bot_user_id in page
    assert "no event yet — invite the bot to a channel and @mention it" in page
    for secret in secrets_of(card_slack):
        assert secret not in page, secret


def test_socket_mode_checks_the_app_token_and_says_what_runs_it(client: Client, guru: Guru,
                                                                card_slack: FakeSlack) -> None:
    response = paste(client, card_slack, Transport.SOCKET, **{"paste-app_token": card_slack.bot_token})
    assert response.status_code == 200 and "starts with “xapp-”" in response.content.decode()
    response = paste(client, card_slack, Transport.SOCKET, **{"paste-app_token": "xapp-1-unknown"})
    assert response.status_code == 200 and "Slack did not accept the token: invalid_auth." in response.content.decode()

    integration = connected(client, card_slack, Transport.SOCKET)
    assert integration.transport == Transport.SOCKET and integration.app_token == card_slack.app_token
    assert [c.token for c in card_slack.calls("apps.connections.open")][-1] == card_slack.app_token
    page = client.get(TAB).content.decode()
    assert "Socket Mode" in page and "<code>./openguru start</code> runs the Socket Mode process" in page
    assert "the <code>slack</code> service" in page
    for secret in secrets_of(card_slack):
        assert secret not in page, secret


def test_channel_allow_list_lists_the_bots_channels_and_saves(client: Client, guru: Guru,
                                                              card_slack: FakeSlack) -> None:
    integration = connected(client, card_slack)
    page = client.get(TAB).content.decode()
    for channel_id in ("C0GENERAL", "C0SUPPORT", "G0PRIVATE"):
        assert f'name="channel" value="{channel_id}" id="slack-ch-{channel_id}">' in page  # listed, not ticked
    assert '#maintainers</label> <span class="badge">private</span>' in page and "#general</label>\n" in page

    form = {"channel": ["C0SUPPORT", "G0PRIVATE"], "name-C0SUPPORT": "support", "mode-C0SUPPORT": "auto",
            "name-G0PRIVATE": "maintainers", "mode-G0PRIVATE": "mention", "mode-C0GENERAL": "auto", "allow_dm": "on"}
    response = client.post(CHANNELS, form)
    assert response.status_code == 302
    integration.refresh_from_db()
    assert integration.channels == [{"id": "C0SUPPORT", "name": "support", "mode": "auto"},
                                    {"id": "G0PRIVATE", "name": "maintainers", "mode": "mention"}]
    assert integration.allow_dm is True
    page = client.get(TAB).content.decode()
    assert "the bot answers in 2 channels and in direct messages" in page
    assert 'value="C0SUPPORT" id="slack-ch-C0SUPPORT" checked>' in page
    assert 'value="C0GENERAL" id="slack-ch-C0GENERAL">' in page
    support_row = page.split('data-channel="C0SUPPORT"', 1)[1].split("</tr>", 1)[0]
    assert '<option value="auto" selected>' in support_row
    assert '<input type="checkbox" name="allow_dm" id="id_allow_dm" checked>' in page

    response = client.post(CHANNELS, {"channel": ["C0SUPPORT"], "mode-C0SUPPORT": "always"})
    assert response.status_code == 302
    assert "Not a channel id or mode" in client.get(TAB).content.decode()
    integration.refresh_from_db()
    assert len(integration.channels) == 2  # unchanged


def test_a_slack_failure_shows_the_error_and_still_the_saved_list(client: Client, guru: Guru,
                                                                  card_slack: FakeSlack) -> None:
    integration = connected(client, card_slack)
    client.post(CHANNELS, {"channel": ["C0SUPPORT"], "name-C0SUPPORT": "support", "mode-C0SUPPORT": "auto"})
    card_slack.web.revoked.add(card_slack.bot_token)  # e.g. revoked at Slack, before its event reached us
    page = client.get(TAB).content.decode()
    assert "Slack did not list the bot&#x27;s channels (token_revoked); the saved list is shown." in page
    assert 'value="C0SUPPORT" id="slack-ch-C0SUPPORT" checked>' in page and "bot not in it" in page
    assert "C0GENERAL" not in page
    integration.refresh_from_db()
    assert integration.channels[0]["id"] == "C0SUPPORT"


def test_slack_out_of_reach_still_shows_the_card(client: Client, guru: Guru, card_slack: FakeSlack,
                                                 settings: SettingsWrapper) -> None:
    connected(client, card_slack)
    client.post(CHANNELS, {"channel": ["C0SUPPORT"], "name-C0SUPPORT": "support", "mode-C0SUPPORT": "auto"})
    settings.OPENGURU_SLACK_API_URL = "http://127.0.0.1:9/api/"  # nothing listens there
    response = client.get(TAB)
    page = response.content.decode()
    assert response.status_code == 200 and "Slack could not be reached; the saved list is shown." in page
    assert 'value="C0SUPPORT" id="slack-ch-C0SUPPORT" checked>' in page


def test_health_shows_the_last_event_and_the_last_error(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    integration = connected(client, card_slack)
    moment = timezone.now() - timedelta(minutes=5)
    Integration.objects.filter(pk=integration.pk).update(
        last_event_at=moment, last_error="Slack refused chat.postMessage: <not_in_channel>", last_error_at=moment)
    page = client.get(TAB).content.decode()
    last_event = page.split('id="slack-last-event">', 1)[1].split("</dd>", 1)[0]
    assert "5\xa0minutes ago" in last_event and "no event yet" not in page
    last_error = page.split('id="slack-last-error">', 1)[1].split("</dd>", 1)[0]
    assert "Slack refused chat.postMessage: &lt;not_in_channel&gt;" in last_error
    assert timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") in last_error


def test_uninstalled_at_slack_shows_why_and_the_setup_again(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    integration = connected(client, card_slack)
    Integration.objects.filter(pk=integration.pk).update(access_token="", last_error="The app was uninstalled.",
                                                         last_error_at=timezone.now())
    page = client.get(TAB).content.decode()
    assert '<span class="badge">not connected</span>' in page and 'id="slack-manifest"' in page
    assert "The last connection stopped: The app was uninstalled." in page
    response = client.post(CHANNELS, {"channel": ["C0GENERAL"]})
    assert "Slack is not connected" in client.get(response["Location"]).content.decode()


def test_disconnect_revokes_the_token_and_forgets_it(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    connected(client, card_slack)
    assert "Disconnect from Slack" in client.get(TAB).content.decode()
    assert client.get(DISCONNECT).status_code == 405  # a link cannot disconnect
    response = client.post(DISCONNECT)
    assert response.status_code == 302 and not Integration.objects.exists()
    assert card_slack.bot_token in card_slack.web.revoked
    assert [c.token for c in card_slack.calls("auth.revoke")] == [card_slack.bot_token]
    page = client.get(TAB).content.decode()
    assert "Disconnected from Slack (Acme)" in page and 'id="slack-manifest"' in page


def test_only_maintainers_reach_the_slack_card(client: Client, guru: Guru, card_slack: FakeSlack,
                                               maintainer: Any) -> None:
    integration = connected(client, card_slack)
    outsider = Client()
    outsider.force_login(UserFactory(username="mallory"))
    for path, method in ((TAB, "get"), (CONNECT, "post"), (CHANNELS, "post"), (DISCONNECT, "post"),
                         (TAB + "slack/oauth/", "post")):
        assert getattr(outsider, method)(path, {"channel": ["C0GENERAL"]}).status_code == 404, path
        response = getattr(Client(), method)(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), path
    assert Integration.objects.get().pk == integration.pk and integration.channels == []
    assert card_slack.calls("auth.revoke") == []
