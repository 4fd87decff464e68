"""The Discord card of the Integrations tab: token, invite link, servers, allow-list, health, disconnect.

Maintainers only. The real setup services and discord.py's HTTP client talk to the local fake Discord
(tests/fakes/discord_server.py).
"""

from __future__ import annotations

import html
import logging
import re
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.integrations.discord_setup import discord_token
from backend.integrations.models import Integration, IntegrationKind
from tests.dashboard.discord_support import (
    ACME,
    APP_ID,
    BETA,
    BOT_USER,
    FORUM,
    GENERAL,
    HELP,
    NEWS,
    OTHER_TOKEN,
    SECRET,
    SUPPORT,
    TOKEN,
    VOICE,
)
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db]

# What the bot needs, by Discord's permission bits: View Channels (10), Send Messages (11), Read Message History
# (16), Create Public Threads (35), Send Messages in Threads (38) — written out here, not taken from the code.
PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 16) | (1 << 35) | (1 << 38)

TAB = "/dashboard/g/celery/integrations/"
CONNECT = TAB + "discord/connect/"
REFRESH = TAB + "discord/refresh/"
CHANNELS = TAB + "discord/channels/"
DISCONNECT = TAB + "discord/disconnect/"

def connect(client: Client, token: str = TOKEN, **fields: str) -> Any:
    return client.post(CONNECT, {"discord-token": token, **fields})


def connected(client: Client) -> Integration:
    response = connect(client)
    assert response.status_code == 302, response.content.decode()[-2000:]
    return Integration.objects.get(kind=IntegrationKind.DISCORD)


def card(page: str) -> str:
    return page.split('id="discord">', 1)[1].split("</section>", 1)[0]


def assert_no_token(page: str) -> None:
    for secret in (TOKEN, OTHER_TOKEN, TOKEN.split(".")[-1]):
        assert secret not in page


def test_not_connected_card_walks_through_the_developer_portal(client: Client, guru: Any,
                                                               card_discord: Any) -> None:
    page = client.get(TAB).content.decode()
    discord = card(page)
    assert "no Discord bot" not in page and '<span class="badge">not connected</span>' in discord
    assert 'href="https://discord.com/developers/applications"' in discord
    assert "Privileged Gateway Intents" in discord and "Message Content Intent" in discord
    assert "Reset Token" in discord and 'name="discord-token"' in discord and 'type="password"' in discord
    assert 'name="discord-use_env"' not in discord  # no DISCORD_BOT_TOKEN on this instance
    assert card_discord.calls == []  # nothing asked of Discord before a token is given


def test_a_good_token_connects_and_is_never_shown_back(client: Client, guru: Any, card_discord: Any,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # discord.py and aiohttp log every request at DEBUG
    response = connect(client)
    assert TOKEN not in caplog.text and TOKEN.split(".")[-1] not in caplog.text
    assert response.status_code == 302 and response["Location"] == TAB + "#discord"
    integration = Integration.objects.get()
    assert (integration.kind, integration.app_id, integration.external_id) == (IntegrationKind.DISCORD, APP_ID, APP_ID)
    assert (integration.bot_user_id, integration.workspace_name) == (BOT_USER, "Celery Guru")
    assert integration.guilds == [{"id": ACME, "name": "Acme"}, {"id": BETA, "name": "Beta"}]
    assert integration.access_token == TOKEN and integration.token_from_env is False
    assert discord_token(integration) == TOKEN
    assert integration.site_url == "http://testserver/" and integration.allow_dm is False
    with connection.cursor() as cursor:  # encrypted at rest
        cursor.execute("SELECT access_token FROM integrations_integration WHERE id = %s", [integration.pk])
        assert TOKEN not in cursor.fetchone()[0]
    paths = {call.path for call in card_discord.calls}
    assert {"/users/@me", "/oauth2/applications/@me", "/users/@me/guilds"} <= paths
    assert {call.token for call in card_discord.calls} == {TOKEN}

    page = client.get(TAB).content.decode()
    assert "Connected the Discord bot “Celery Guru”; it is in 2 servers: choose its channels below." in page
    discord = card(page)
    assert '<span class="badge ok">connected</span>' in discord and BOT_USER in discord
    assert "<strong>Acme</strong>, <strong>Beta</strong>" in discord
    assert "no event yet" in discord and "pasted here, stored encrypted" in discord
    assert "<strong>Discord</strong>, as the bot Celery Guru" in page
    assert_no_token(page)


def test_the_message_content_intent_turned_off_is_said_at_once(client: Client, guru: Any,
                                                               card_discord: Any) -> None:
    quiet = "MTAwMDAwMDAwMDAwMDAwMDAx.Gquiet.intent-not-turned-on-token"
    card_discord.add_bot(quiet, user_id="123456789012345601", name="Quiet", application_id="223456789012345601",
                         message_content=False)
    response = connect(client, quiet)
    assert response.status_code == 302
    page = client.get(TAB).content.decode()
    assert '<li class="message warning">The Message Content intent is off for this application' in page
    assert "Connected the Discord bot “Quiet”" in page
    assert "Message Content intent is off" not in client.get(TAB).content.decode()  # said once, not stored


def test_a_wrong_token_is_refused_with_what_to_do(client: Client, guru: Any, card_discord: Any) -> None:
    wrong = "MTExMTExMTExMTExMTExMTEx.Gwrong.not-a-token-discord-knows"
    response = connect(client, wrong)
    page = response.content.decode()
    assert response.status_code == 200 and "Discord did not accept the token (401)" in page
    assert wrong not in page and wrong.split(".")[-1] not in page  # the input comes back empty
    assert 'class="active" aria-current="page">Integrations</a>' in page
    response = connect(client, "short")
    assert "Paste the bot token" in response.content.decode()
    response = connect(client, "")
    assert "Paste the bot token." in response.content.decode()
    assert not Integration.objects.exists()


def test_discord_out_of_reach_says_so_and_keeps_nothing(client: Client, guru: Any, card_discord: Any,
                                                        settings: SettingsWrapper) -> None:
    settings.OPENGURU_DISCORD_API_URL = "http://127.0.0.1:9/api/v10"  # nothing listens there
    response = connect(client)
    page = response.content.decode()
    assert response.status_code == 200 and "Discord could not be reached from this instance" in page
    assert not Integration.objects.exists()
    assert_no_token(page)


def test_the_operators_token_serves_one_guru(client: Client, guru: Any, card_discord: Any, maintainer: Any,
                                             settings: SettingsWrapper) -> None:
    settings.DISCORD_BOT_TOKEN = TOKEN
    discord = card(client.get(TAB).content.decode())
    assert 'name="discord-use_env"' in discord and "DISCORD_BOT_TOKEN" in discord
    response = connect(client, "", **{"discord-use_env": "on"})
    assert response.status_code == 302, response.content.decode()[-1500:]
    integration = Integration.objects.get()
    assert integration.token_from_env is True and integration.access_token == ""
    assert discord_token(integration) == TOKEN
    page = client.get(TAB).content.decode()
    assert "from <code>DISCORD_BOT_TOKEN</code>" in page
    assert_no_token(page)

    other = GuruFactory(slug="flask", name="Flask Guru")
    other.maintainers.add(maintainer)
    tab = "/dashboard/g/flask/integrations/"
    assert 'name="discord-use_env"' not in card(client.get(tab).content.decode())  # taken by Celery Guru
    response = client.post(tab + "discord/connect/", {"discord-use_env": "on", "discord-token": ""})
    assert "Paste the bot token." in response.content.decode()  # the option is not offered, so not taken
    response = client.post(tab + "discord/connect/", {"discord-token": OTHER_TOKEN})
    assert response.status_code == 302
    assert Integration.objects.get(guru=other).workspace_name == "Other Bot"


def test_one_bot_may_answer_for_several_gurus(client: Client, guru: Any, card_discord: Any, maintainer: Any) -> None:
    connected(client)
    other = GuruFactory(slug="flask", name="Flask Guru")
    other.maintainers.add(maintainer)
    response = client.post("/dashboard/g/flask/integrations/discord/connect/", {"discord-token": TOKEN})
    assert response.status_code == 302
    assert Integration.objects.filter(external_id=APP_ID).count() == 2
    shared = client.get(TAB).content.decode().split('id="discord-shared">', 1)[1].split("</p>", 1)[0]
    assert "This bot also answers for Flask Guru" in shared


def test_the_invite_link_asks_for_exactly_the_permissions_needed(client: Client, guru: Any,
                                                                 card_discord: Any) -> None:
    connected(client)
    discord = card(client.get(TAB).content.decode())
    found = re.search(r'<a href="([^"]+)" target="_blank" rel="noopener" id="discord-invite">', discord)
    assert found, "no invite link"
    url = urlsplit(html.unescape(found.group(1)))
    assert (url.scheme, url.netloc, url.path) == ("https", "discord.com", "/oauth2/authorize")
    query = parse_qs(url.query)
    assert query["client_id"] == [APP_ID] and query["permissions"] == [str(PERMISSIONS)]
    assert query["scope"] == ["bot applications.commands"]
    for name in ("View Channels", "Send Messages", "Create Public Threads", "Send Messages in Threads",
                 "Read Message History"):
        assert name in discord


def test_the_allow_list_groups_channels_by_server_and_saves_modes(client: Client, guru: Any,
                                                                  card_discord: Any) -> None:
    integration = connected(client)
    discord = card(client.get(TAB).content.decode())
    acme = discord.split(f'data-guild="{ACME}"', 1)[1].split("</table>", 1)[0]
    listed = re.findall(r'data-channel="(\d+)"', acme)
    assert listed == [GENERAL, NEWS, FORUM]  # no category, no voice channel; uncategorised first, as Discord shows
    assert '<span class="badge">forum</span>' in acme and "Help" in acme
    assert re.findall(r'data-channel="(\d+)"', discord.split(f'data-guild="{BETA}"', 1)[1]) == [SUPPORT]
    assert SECRET not in discord and "Elsewhere" not in discord
    assert "checked by their parent channel" in discord
    assert '<input type="checkbox" name="allow_dm" id="id_allow_dm">' in discord  # DMs off by default

    form = {f"mode-{GENERAL}": "mention", f"mode-{NEWS}": "off", f"mode-{FORUM}": "auto", f"mode-{SUPPORT}": "auto"}
    response = client.post(CHANNELS, form)
    assert response.status_code == 302
    integration.refresh_from_db()
    assert integration.channels == [
        {"id": GENERAL, "name": "general", "mode": "mention", "guild_id": ACME, "kind": "text"},
        {"id": FORUM, "name": "questions", "mode": "auto", "guild_id": ACME, "kind": "forum"},
        {"id": SUPPORT, "name": "support", "mode": "auto", "guild_id": BETA, "kind": "text"}]
    assert integration.allow_dm is False
    page = client.get(TAB).content.decode()
    assert "Saved: the bot answers in 3 channels (and their threads)." in page
    row = card(page).split(f'data-channel="{FORUM}"', 1)[1].split("</tr>", 1)[0]
    assert '<option value="auto" selected>every message</option>' in row

    response = client.post(CHANNELS, {f"mode-{GENERAL}": "auto", "allow_dm": "on"})
    integration.refresh_from_db()
    assert integration.allow_dm is True and [c["id"] for c in integration.channels] == [GENERAL]
    assert "and in direct messages" in client.get(TAB).content.decode()


@pytest.mark.parametrize(("form", "why"), [
    ({f"mode-{SECRET}": "mention"}, "Not a channel of the bot&#x27;s servers"),  # another bot's server
    ({f"mode-{VOICE}": "mention"}, "Not a channel of the bot&#x27;s servers"),  # a voice channel
    ({f"mode-{HELP}": "auto"}, "Not a channel of the bot&#x27;s servers"),  # a category
    ({f"mode-{GENERAL}": "always"}, "Not a channel id or mode"),
    ({"mode-general": "mention"}, "Not a channel id or mode"),
])
def test_only_the_bots_text_and_forum_channels_are_accepted(client: Client, guru: Any, card_discord: Any,
                                                            form: dict[str, str], why: str) -> None:
    integration = connected(client)
    client.post(CHANNELS, {f"mode-{GENERAL}": "mention"})
    response = client.post(CHANNELS, {**form, "allow_dm": "on"})
    assert response.status_code == 302
    page = client.get(TAB).content.decode()
    assert why in page and "Nothing was saved." in page
    integration.refresh_from_db()
    assert [c["id"] for c in integration.channels] == [GENERAL] and integration.allow_dm is False


def test_refresh_finds_a_server_the_bot_was_invited_to(client: Client, guru: Any, card_discord: Any) -> None:
    lonely = "MTAwMDAwMDAwMDAwMDAwMDAw.Glone.bot-in-no-server-yet-token"
    card_discord.add_bot(lonely, user_id="123456789012345600", name="Lonely", application_id="223456789012345600")
    response = connect(client, lonely)
    assert response.status_code == 302
    page = client.get(TAB).content.decode()
    assert "it is in no server yet: add it with the invite link below" in page
    assert "The bot is not in any server yet — use the invite link above, then Refresh." in card(page)
    card_discord.add_guild("300000000000000009", "Gamma", bots=[lonely],
                           channels=[{"id": "400000000000000091", "name": "ask", "type": 0}])
    assert client.get(REFRESH).status_code == 405
    response = client.post(REFRESH)
    assert response.status_code == 302
    page = client.get(TAB).content.decode()
    assert "The bot is in 1 server: “Gamma”." in page and 'data-channel="400000000000000091"' in page
    assert Integration.objects.get().guilds == [{"id": "300000000000000009", "name": "Gamma"}]


def test_discord_down_still_shows_the_saved_allow_list(client: Client, guru: Any, card_discord: Any,
                                                       settings: SettingsWrapper) -> None:
    connected(client)
    client.post(CHANNELS, {f"mode-{FORUM}": "auto"})
    settings.OPENGURU_DISCORD_API_URL = "http://127.0.0.1:9/api/v10"
    response = client.get(TAB)
    discord = card(response.content.decode())
    assert response.status_code == 200
    assert "Discord could not be reached; the saved servers and channels are shown." in discord
    row = discord.split(f'data-channel="{FORUM}"', 1)[1].split("</tr>", 1)[0]
    assert "not listed now" in row and '<option value="auto" selected>' in row
    response = client.post(CHANNELS, {f"mode-{FORUM}": "mention"})
    assert "Discord could not be reached. Nothing was saved." in client.get(TAB).content.decode()


def test_health_shows_the_last_event_and_the_last_error(client: Client, guru: Any, card_discord: Any) -> None:
    integration = connected(client)
    moment = timezone.now() - timedelta(minutes=5)
    Integration.objects.filter(pk=integration.pk).update(
        last_event_at=moment, last_error="Gateway closed: <4014 disallowed intents>", last_error_at=moment)
    page = client.get(TAB).content.decode()
    last_event = page.split('id="discord-last-event">', 1)[1].split("</dd>", 1)[0]
    assert "5\xa0minutes ago" in last_event and "no event yet" not in card(page)
    last_error = page.split('id="discord-last-error">', 1)[1].split("</dd>", 1)[0]
    assert "Gateway closed: &lt;4014 disallowed intents&gt;" in last_error
    assert timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") in last_error


def test_disconnect_forgets_the_bot(client: Client, guru: Any, card_discord: Any) -> None:
    connected(client)
    assert "Disconnect from Discord" in client.get(TAB).content.decode()
    assert client.get(DISCONNECT).status_code == 405  # a link cannot disconnect
    response = client.post(DISCONNECT)
    assert response.status_code == 302 and not Integration.objects.exists()
    page = client.get(TAB).content.decode()
    assert "Disconnected the Discord bot “Celery Guru”" in page and 'name="discord-token"' in page
    response = client.post(CHANNELS, {f"mode-{GENERAL}": "auto"})
    assert "Discord is not connected" in client.get(response["Location"]).content.decode()


def test_only_maintainers_reach_the_discord_card(client: Client, guru: Any, card_discord: Any) -> None:
    integration = connected(client)
    calls = len(card_discord.calls)
    outsider = Client()
    outsider.force_login(UserFactory(username="mallory"))
    for path, method in ((TAB, "get"), (CONNECT, "post"), (REFRESH, "post"), (CHANNELS, "post"),
                         (DISCONNECT, "post")):
        form = {f"mode-{GENERAL}": "auto", "discord-token": OTHER_TOKEN}
        assert getattr(outsider, method)(path, form).status_code == 404, path
        response = getattr(Client(), method)(path, form)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), path
    integration.refresh_from_db()
    assert integration.channels == [] and integration.workspace_name == "Celery Guru"
    assert len(card_discord.calls) == calls  # no request reached Discord for them


def test_the_forms_need_the_csrf_token(guru: Any, card_discord: Any, maintainer: Any) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(maintainer)
    assert strict.post(CONNECT, {"discord-token": TOKEN}).status_code == 403
    assert not Integration.objects.exists()
