"""The Discord REST adapter: discord.py's real HTTP client against the local fake Discord, errors made ours."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from discord.http import Route

from backend.adapters.discord.rest import BotIdentity, DiscordChannel, DiscordError, DiscordRest, Guild, invite_url

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gunit1.adapter-test-token-only"
QUIET = "MTIzNDU2Nzg5MDEyMzQ1Njc5.Gunit2.no-message-content-intent"
OUTSIDER = "MTIzNDU2Nzg5MDEyMzQ1Njgw.Gunit3.a-bot-in-another-server"
MINE, THEIRS = "300000000000000001", "300000000000000002"


@pytest.fixture
def fake(discord_fake: Any) -> Any:
    discord_fake.add_bot(TOKEN, user_id="100000000000000001", name="Guru", application_id="200000000000000001")
    discord_fake.add_bot(QUIET, user_id="100000000000000002", name="Quiet", application_id="200000000000000002",
                         message_content=False)
    discord_fake.add_bot(OUTSIDER, user_id="100000000000000003", name="Out", application_id="200000000000000003")
    discord_fake.add_guild(MINE, "zeta", bots=[TOKEN], channels=[
        {"id": "401", "name": "Support", "type": 4, "position": 0},
        {"id": "402", "name": "Archive", "type": 4, "position": 1},
        {"id": "410", "name": "old-news", "type": 5, "parent_id": "402", "position": 0},
        {"id": "411", "name": "help", "type": 0, "parent_id": "401", "position": 1},
        {"id": "412", "name": "questions", "type": 15, "parent_id": "401", "position": 0},
        {"id": "413", "name": "voice", "type": 2, "parent_id": "401", "position": 2},
        {"id": "414", "name": "welcome", "type": 0, "position": 0},
    ])
    discord_fake.add_guild("300000000000000003", "Alpha", bots=[TOKEN], channels=[])
    discord_fake.add_guild(THEIRS, "Theirs", bots=[OUTSIDER], channels=[{"id": "499", "name": "x", "type": 0}])
    return discord_fake


def rest(fake: Any, token: str = TOKEN) -> DiscordRest:
    return DiscordRest(token, base_url=fake.api_url)


def test_identity_guilds_and_channels(fake: Any) -> None:
    base_before = Route.BASE
    assert rest(fake).identity() == BotIdentity(user_id="100000000000000001", name="Guru",
                                                application_id="200000000000000001", message_content=True)
    assert rest(fake, QUIET).identity().message_content is False
    assert rest(fake).guilds() == [Guild(id="300000000000000003", name="Alpha"), Guild(id=MINE, name="zeta")]
    assert rest(fake).channels(MINE) == [
        DiscordChannel(id="414", name="welcome", kind="text", category=""),
        DiscordChannel(id="412", name="questions", kind="forum", category="Support"),
        DiscordChannel(id="411", name="help", kind="text", category="Support"),
        DiscordChannel(id="410", name="old-news", kind="text", category="Archive"),
    ]
    assert rest(fake).channels("300000000000000003") == []
    servers = rest(fake).servers(max_guilds=1)
    assert [(guild.name, len(channels)) for guild, channels in servers] == [("Alpha", 0), ("zeta", 0)]
    assert [len(channels) for _, channels in rest(fake).servers(max_guilds=5)] == [0, 4]
    assert base_before == Route.BASE  # the base URL is this adapter's, not discord.py's process-wide attribute
    assert {call.token for call in fake.calls} == {TOKEN, QUIET}


@pytest.mark.parametrize(("guild_id", "code"), [(THEIRS, "forbidden"), ("399999999999999999", "http_404")])
def test_refusals_are_named(fake: Any, guild_id: str, code: str) -> None:
    with pytest.raises(DiscordError) as caught:
        rest(fake).channels(guild_id)
    assert caught.value.code == code


def test_a_wrong_token_is_invalid_and_not_repeated(fake: Any) -> None:
    wrong = "MTExMTExMTExMTExMTExMTEx.Gwrong.nobody-knows-this-one"
    with pytest.raises(DiscordError) as caught:
        rest(fake, wrong).identity()
    assert caught.value.code == "invalid_token" and wrong not in str(caught.value)


def test_discord_out_of_reach() -> None:
    with pytest.raises(DiscordError) as caught:
        DiscordRest(TOKEN, base_url="http://127.0.0.1:9/api/v10").guilds()  # nothing listens on port 9
    assert caught.value.code == "connection_failed"


def test_the_invite_asks_for_exactly_five_permissions_and_the_commands_scope() -> None:
    url = urlsplit(invite_url("200000000000000001"))
    query = parse_qs(url.query)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://discord.com/oauth2/authorize"
    assert query["client_id"] == ["200000000000000001"] and query["scope"] == ["bot applications.commands"]
    # View Channels, Send Messages, Read Message History, Create Public Threads, Send Messages in Threads.
    assert int(query["permissions"][0]) == (1 << 10) | (1 << 11) | (1 << 16) | (1 << 35) | (1 << 38)
