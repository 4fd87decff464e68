"""Contract: the real discord.py 2.7.1 client (gateway + REST + app commands) works against the fake Discord."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import discord
import pytest
from discord import app_commands

from backend.adapters.discord.endpoints import point_discord_py_at
from tests.fakes.discord_server import FakeDiscord

TOKEN, BOT_ID, APP_ID = "bot-token-1", "900000000000000001", "900000000000000002"
OTHER_TOKEN, OTHER_ID = "bot-token-2", "900000000000000011"
GUILD, GENERAL, FORUM, CATEGORY = "910000000000000001", "920000000000000001", "920000000000000002", "920000000000000003"
ALICE = "930000000000000001"
Scenario = Callable[[discord.Client], Awaitable[None]]


@pytest.fixture
def fake(discord_fake: FakeDiscord) -> FakeDiscord:
    discord_fake.add_bot(TOKEN, user_id=BOT_ID, name="guru", application_id=APP_ID)
    discord_fake.add_user(ALICE, "alice")
    discord_fake.add_guild(GUILD, "Guild", bots=[TOKEN], channels=[
        {"id": CATEGORY, "name": "Help", "type": 4},
        {"id": GENERAL, "name": "general", "type": 0, "parent_id": CATEGORY},
        {"id": FORUM, "name": "questions", "type": 15}])
    point_discord_py_at(discord_fake.api_url, discord_fake.gateway_url)
    return discord_fake


def _intents(*, content: bool = True) -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.dm_messages = True
    intents.guild_reactions = intents.dm_reactions = True
    intents.message_content = content
    return intents


def _client(*, content: bool = True) -> discord.Client:
    # guild_ready_timeout: discord.py waits this long after the last GUILD_CREATE before on_ready (default 2 s).
    return discord.Client(intents=_intents(content=content), guild_ready_timeout=0.05)


async def _running(clients: list[tuple[discord.Client, str]], scenario: Callable[[], Awaitable[None]]) -> None:
    """Start the clients, wait until each is ready, run the scenario, close them; all bounded by timeouts."""
    tasks = []
    try:
        for client, token in clients:  # what client.start() does, in two steps so wait_until_ready may follow
            await asyncio.wait_for(client.login(token), 10)
            tasks.append(asyncio.create_task(client.connect()))
        for client, _ in clients:
            await asyncio.wait_for(client.wait_until_ready(), 10)
        await asyncio.wait_for(scenario(), 30)
    finally:
        for client, _ in clients:
            await client.close()
        for task in tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 10)


def run(client: discord.Client, scenario: Scenario, token: str = TOKEN) -> None:
    asyncio.run(_running([(client, token)], lambda: scenario(client)))


async def until(fake: FakeDiscord, predicate: Callable[[], Any], timeout: float = 10) -> Any:
    return await asyncio.to_thread(fake.wait_for, predicate, timeout)


async def next_message(client: discord.Client, check: Callable[[discord.Message], bool]) -> discord.Message:
    message: discord.Message = await client.wait_for("message", check=check, timeout=10)
    return message


# --- connecting --------------------------------------------------------------------------------------------------

def test_connect_ready_and_the_guild_is_cached_with_its_channels(fake: FakeDiscord) -> None:
    client = _client()

    async def scenario(c: discord.Client) -> None:
        assert c.user is not None and str(c.user.id) == BOT_ID and c.application_id == int(APP_ID)
        guild = c.get_guild(int(GUILD))
        assert guild is not None and guild.name == "Guild" and guild.me is not None
        general, forum = guild.get_channel(int(GENERAL)), guild.get_channel(int(FORUM))
        assert isinstance(general, discord.TextChannel) and general.category_id == int(CATEGORY)
        assert isinstance(forum, discord.ForumChannel) and isinstance(guild.get_channel(int(CATEGORY)),
                                                                      discord.CategoryChannel)
        assert general.permissions_for(guild.me).create_public_threads
        assert fake.connected(TOKEN) and fake.identifies(TOKEN) == 1

    run(client, scenario)
    assert [c.path for c in fake.calls][:2] == ["/users/@me", "/oauth2/applications/@me"]


def test_privileged_intent_not_enabled_for_the_app_is_refused_with_4014(fake: FakeDiscord) -> None:
    fake.add_bot(OTHER_TOKEN, user_id=OTHER_ID, name="plain", application_id="900000000000000012",
                 message_content=False)

    async def start() -> None:
        await asyncio.wait_for(_client(content=True).start(OTHER_TOKEN), 20)

    with pytest.raises(discord.PrivilegedIntentsRequired):
        asyncio.run(start())
    assert fake.identifies(OTHER_TOKEN) == 1 and not fake.connected(OTHER_TOKEN)


def test_a_bad_token_fails_the_login(fake: FakeDiscord) -> None:
    with pytest.raises(discord.LoginFailure):
        asyncio.run(asyncio.wait_for(_client().start("not-a-token"), 20))


# --- messages ----------------------------------------------------------------------------------------------------

def test_message_content_needs_the_intent_unless_mentioned_or_in_a_dm(fake: FakeDiscord) -> None:
    fake.add_bot(OTHER_TOKEN, user_id=OTHER_ID, name="plain", application_id="900000000000000012",
                 message_content=False)
    fake.add_guild("910000000000000002", "Both", bots=[TOKEN, OTHER_TOKEN],
                   channels=[{"id": "920000000000000009", "name": "shared", "type": 0}])
    with_intent, without = _client(), _client(content=False)

    async def scenario() -> None:
        def alice(m: discord.Message) -> bool:
            return str(m.author.id) == ALICE
        seen = asyncio.gather(next_message(with_intent, alice), next_message(without, alice))
        await asyncio.sleep(0)  # let both wait_for listeners register before the message goes out
        fake.user_message(channel_id="920000000000000009", author_id=ALICE, content="what is a guru?")
        full, empty = await seen
        assert (full.content, empty.content) == ("what is a guru?", "")
        mentioned = next_message(without, alice)
        fake.user_message(channel_id="920000000000000009", author_id=ALICE, content="hi", mentions=[OTHER_ID])
        message = await mentioned
        assert message.content == f"<@{OTHER_ID}> hi" and message.mentions[0].id == int(OTHER_ID)
        dm = next_message(without, alice)
        fake.user_dm(OTHER_TOKEN, author_id=ALICE, content="private question")
        private = await dm
        assert private.content == "private question" and isinstance(private.channel, discord.DMChannel)
        await private.channel.send("private answer")
        await until(fake, lambda: fake.calls[-1].path.endswith(f"/channels/{private.channel.id}/messages"))

    asyncio.run(_running([(with_intent, TOKEN), (without, OTHER_TOKEN)], scenario))


def test_send_edit_thread_and_own_messages_over_the_gateway(fake: FakeDiscord) -> None:
    client = _client()

    async def scenario(c: discord.Client) -> None:
        asked = asyncio.ensure_future(next_message(c, lambda m: m.author != c.user))
        await asyncio.sleep(0)
        fake.user_message(channel_id=GENERAL, author_id=ALICE, content="how do I deploy?", mentions=[BOT_ID])
        question = await asked
        own = asyncio.ensure_future(next_message(c, lambda m: m.author == c.user))
        created = asyncio.ensure_future(c.wait_for("thread_create", timeout=10))
        thread = await question.create_thread(name="how do I deploy?")
        assert c.user is not None and isinstance(thread, discord.Thread)
        assert thread.id == question.id and thread.owner_id == c.user.id
        assert (await created).id == thread.id and c.get_channel(thread.id) is not None
        reply = await thread.send("thinking…")
        assert (await own).id == reply.id and reply.channel.id == thread.id
        await reply.edit(content="It is deployed with compose.")
        follow = await question.reply("see the thread")
        assert follow.reference is not None and follow.reference.message_id == question.id

    run(client, scenario)
    [thread] = fake.threads()
    assert (thread["parent_id"], thread["owner_id"], thread["starter_message_id"]) == (GENERAL, BOT_ID, thread["id"])
    [answer] = fake.channel_messages(thread["id"])
    assert answer["content"] == "It is deployed with compose." and answer["_edits"] == [answer["content"]]
    assert answer["author"]["id"] == BOT_ID and answer["channel_id"] == thread["id"]
    assert fake.channel_messages(GENERAL)[-1]["message_reference"]["message_id"] == thread["id"]


def test_forum_posts_are_threads_whose_starter_message_has_the_thread_id(fake: FakeDiscord) -> None:
    client = _client()
    posts: list[dict[str, Any]] = []

    async def scenario(c: discord.Client) -> None:
        asked = asyncio.ensure_future(next_message(c, lambda m: m.author != c.user))
        await asyncio.sleep(0)
        posts.append(fake.user_forum_post(forum_id=FORUM, author_id=ALICE, title="Install fails", content="pip error"))
        message = await asked
        assert isinstance(message.channel, discord.Thread) and message.id == message.channel.id == int(posts[0]["id"])
        assert isinstance(message.channel.parent, discord.ForumChannel) and message.content == "pip error"
        assert message.channel.name == "Install fails"
        await message.channel.send("Try a fresh venv.")

    run(client, scenario)
    in_post = fake.channel_messages(posts[0]["id"])
    assert [(m["author"]["id"], m["content"]) for m in in_post] == [(ALICE, "pip error"), (BOT_ID, "Try a fresh venv.")]
    assert fake.threads() == []  # a person's post, not a thread the bot made over REST


def test_reactions_are_dispatched_raw(fake: FakeDiscord) -> None:
    client = _client()
    message = fake.user_message(channel_id=GENERAL, author_id=ALICE, content="an answer")

    async def scenario(c: discord.Client) -> None:
        added = c.wait_for("raw_reaction_add", timeout=10)
        fake.user_reaction(channel_id=GENERAL, message_id=message["id"], user_id=ALICE, emoji="👍")
        event = await added
        assert (str(event.emoji), event.user_id, event.message_id) == ("👍", int(ALICE), int(message["id"]))
        assert event.member is not None and event.guild_id == int(GUILD)
        removed = c.wait_for("raw_reaction_remove", timeout=10)
        fake.user_reaction(channel_id=GENERAL, message_id=message["id"], user_id=ALICE, emoji="👍", removed=True)
        assert str((await removed).emoji) == "👍"

    run(client, scenario)


# --- reconnecting ------------------------------------------------------------------------------------------------

def test_a_dropped_connection_is_resumed_and_missed_events_are_replayed(fake: FakeDiscord) -> None:
    client = _client()

    async def scenario(c: discord.Client) -> None:
        resumed = c.wait_for("resumed", timeout=10)
        missed = asyncio.ensure_future(next_message(c, lambda m: m.content == "sent while you were away"))
        await asyncio.sleep(0)
        with fake.world.lock:  # holding the lock, no RESUME can slip in between: the message is surely missed
            fake.drop_connections(TOKEN)
            assert not fake.connected(TOKEN)
            fake.user_message(channel_id=GENERAL, author_id=ALICE, content="sent while you were away")
        await resumed
        assert (await missed).author.id == int(ALICE)
        assert (fake.identifies(TOKEN), fake.resumes(TOKEN)) == (1, 1) and fake.connected(TOKEN)
        live = next_message(c, lambda m: m.content == "after the resume")
        fake.user_message(channel_id=GENERAL, author_id=ALICE, content="after the resume")
        await live

    run(client, scenario)


class _NoIdentifyPause(discord.Client):
    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return  # discord.py sleeps 5 s before every IDENTIFY but the first (its documented override point)


def test_a_forgotten_session_gets_invalid_session_and_the_client_identifies_again(fake: FakeDiscord) -> None:
    client = _NoIdentifyPause(intents=_intents(), guild_ready_timeout=0.05)

    async def scenario(c: discord.Client) -> None:
        with fake.world.lock:
            fake.invalidate_sessions(TOKEN)
            fake.drop_connections(TOKEN)
        await until(fake, lambda: fake.identifies(TOKEN) == 2 and fake.connected(TOKEN))
        assert (fake.resumes(TOKEN), fake.invalid_sessions(TOKEN)) == (0, 1)
        again = next_message(c, lambda m: m.content == "still there?")
        fake.user_message(channel_id=GENERAL, author_id=ALICE, content="still there?")
        await again

    run(client, scenario)


# --- application commands and components -------------------------------------------------------------------------

def test_a_slash_command_is_synced_run_deferred_and_answered_by_editing(fake: FakeDiscord) -> None:
    client = _client()
    tree = app_commands.CommandTree(client)
    asked: list[str] = []

    @tree.command(name="ask", description="Ask the guru")
    async def ask(interaction: discord.Interaction, question: str) -> None:
        asked.append(question)
        await interaction.response.defer(ephemeral=True, thinking=True)
        await interaction.edit_original_response(content=f"answer to {question}")

    async def scenario(c: discord.Client) -> None:
        synced = await tree.sync()
        assert [(s.name, s.options[0].name) for s in synced] == [("ask", "question")]
        interaction_id = fake.slash_command(TOKEN, guild_id=GUILD, channel_id=GENERAL, user_id=ALICE,
                                            options={"question": "what is X?"})
        responses = await until(fake, lambda: len(fake.interaction_responses(interaction_id)) == 2
                                and fake.interaction_responses(interaction_id))
        callback, edit = responses
        assert (callback["kind"], callback["type"], callback["flags"]) == ("callback", 5, 64)
        assert (edit["kind"], edit["content"]) == ("edit_original", "answer to what is X?")

    run(client, scenario)
    assert asked == ["what is X?"]
    [command] = fake.commands(APP_ID)
    assert command["name"] == "ask" and "guild_id" not in command
    assert fake.channel_messages(GENERAL) == []  # ephemeral: nobody else sees it


def test_a_button_click_reaches_on_interaction_and_is_answered_ephemerally(fake: FakeDiscord) -> None:
    client = _client()
    clicks: list[discord.Interaction] = []

    @client.event
    async def on_interaction(interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.component:
            clicks.append(interaction)
            await interaction.response.send_message("Thanks for the feedback", ephemeral=True)

    async def scenario(c: discord.Client) -> None:
        channel = c.get_channel(int(GENERAL))
        assert isinstance(channel, discord.TextChannel)
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label="👍", custom_id="feedback:up"))
        answer = await channel.send("the answer", view=view)
        interaction_id = fake.button_click(TOKEN, channel_id=GENERAL, message_id=str(answer.id), user_id=ALICE,
                                           custom_id="feedback:up")
        [response] = await until(fake, lambda: fake.interaction_responses(interaction_id))
        assert (response["type"], response["flags"], response["content"]) == (4, 64, "Thanks for the feedback")

    run(client, scenario)
    [click] = clicks
    assert click.data is not None and click.data.get("custom_id") == "feedback:up"
    assert click.message is not None and click.message.content == "the answer" and click.user.id == int(ALICE)
    [answer] = fake.channel_messages(GENERAL)  # the ephemeral thanks is not in the channel
    assert answer["components"][0]["components"][0]["custom_id"] == "feedback:up"


# --- the REST reads the dashboard makes (no discord.py) ----------------------------------------------------------

def _get(fake: FakeDiscord, path: str, token: str = TOKEN) -> tuple[int, Any]:
    request = urllib.request.Request(fake.api_url + path, headers={"Authorization": f"Bot {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_sync_rest_reads_and_a_bad_token(fake: FakeDiscord) -> None:
    assert _get(fake, "/users/@me")[1]["id"] == BOT_ID
    status, app = _get(fake, "/oauth2/applications/@me")
    assert (status, app["id"], app["bot"]["id"], app["flags"] & (1 << 19)) == (200, APP_ID, BOT_ID, 1 << 19)
    assert _get(fake, "/users/@me/guilds")[1] == [
        {"id": GUILD, "name": "Guild", "icon": None, "banner": None, "owner": False,
         "permissions": _get(fake, "/users/@me/guilds")[1][0]["permissions"], "features": []}]
    status, channels = _get(fake, f"/guilds/{GUILD}/channels")
    assert status == 200 and [(c["id"], c["type"]) for c in channels] == [(CATEGORY, 4), (GENERAL, 0), (FORUM, 15)]
    assert _get(fake, "/users/@me", token="wrong") == (401, {"message": "401: Unauthorized", "code": 0})
    assert _get(fake, "/guilds/999/channels")[0] == 404
    assert [(c.method, c.path, c.token) for c in fake.calls][-1] == ("GET", "/guilds/999/channels", TOKEN)
