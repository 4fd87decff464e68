"""A local fake Discord (REST /api/v10 + gateway WebSocket on one port) for driving the real discord.py in tests."""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TypeVar

import pytest
from aiohttp import web

from tests.fakes import discord_interactions as interactions
from tests.fakes import discord_objects as obj
from tests.fakes import discord_rest_writes  # noqa: F401  (registers the write routes)
from tests.fakes.discord_gateway import needs
from tests.fakes.discord_objects import Bot, Guild, Json
from tests.fakes.discord_rest import build_app
from tests.fakes.discord_state import Call, World

__all__ = ["Call", "FakeDiscord"]

T = TypeVar("T")


def _observed(message: Json) -> Json:
    """A stored message for a test to read: the wire fields plus `_edits` (the content after each PATCH)."""
    return obj.wire(message) | {"_edits": list(message["_edits"])}


class FakeDiscord:
    """`with FakeDiscord() as fake:` REST and gateway on 127.0.0.1 (a thread with its own event loop)."""

    def __init__(self) -> None:
        self.world = World()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="fake-discord")
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle -------------------------------------------------------------------------------------------

    def __enter__(self) -> FakeDiscord:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        self.world.gateway_url = self.gateway_url
        return self

    async def _start(self) -> None:
        # A short shutdown_timeout: open gateway sockets must not hold the test's teardown for aiohttp's 60 s.
        self._runner = web.AppRunner(build_app(self.world, self.world.gateway.handle), shutdown_timeout=1.0,
                                     access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.world.gateway.drop(None)
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def reset(self) -> None:
        """Forget everything (bots, guilds, messages, sessions, calls) and drop open gateway connections."""
        self.world.reset()

    # --- the world -------------------------------------------------------------------------------------------

    def add_bot(self, token: str, *, user_id: str, name: str, application_id: str,
                message_content: bool = True) -> None:
        """A bot (application) and its token; message_content=False: the intent is not enabled for the app, so
        an IDENTIFY asking for it is closed with 4014 (discord.PrivilegedIntentsRequired)."""
        bot = Bot(token, user_id, name, application_id, message_content)
        with self.world.lock:
            self.world.bots[token] = bot
            self.world.users[user_id] = bot.user()

    def add_user(self, user_id: str, name: str) -> None:
        with self.world.lock:
            self.world.users[user_id] = obj.user_object(user_id, name)

    def add_guild(self, guild_id: str, name: str, *, bots: list[str], channels: list[Json]) -> None:
        """A guild with channels {"id","name","type": 0|5|15|4,"parent_id"?}; a bot already connected gets its
        GUILD_CREATE at once (as when it is invited)."""
        with self.world.lock:
            guild = Guild(guild_id, name, list(bots))
            for position, spec in enumerate(channels):
                channel = obj.channel_object(spec, guild_id, position)
                self.world.channels[channel["id"]] = channel
                self.world.messages.setdefault(channel["id"], [])
                guild.channel_ids.append(channel["id"])
            self.world.guilds[guild_id] = guild
            for token in bots:
                joined = self.world.guild_create(guild, self.world.bots[token])
                self.world.gateway.dispatch(token, "GUILD_CREATE", needs(obj.GUILDS, joined))

    def _user(self, user_id: str) -> Json:
        with self.world.lock:
            if user_id not in self.world.users:
                raise ValueError(f"unknown user {user_id}: add_user() it first")
            return self.world.users[user_id]

    def _mentioning(self, content: str, mentions: list[str] | tuple[str, ...]) -> tuple[str, list[Json]]:
        """Discord puts a mention in the text as <@id>; add the ones the content lacks in front."""
        missing = [m for m in mentions if f"<@{m}>" not in content and f"<@!{m}>" not in content]
        text = " ".join([*(f"<@{m}>" for m in missing), content]) if missing else content
        return text, [self._user(m) for m in mentions]

    # --- what people do --------------------------------------------------------------------------------------

    def user_message(self, *, channel_id: str, author_id: str, content: str, mentions: list[str] | tuple[str, ...] = (),
                     guild_id: str | None = None, reply_to: str | None = None) -> Json:
        """A person posts in a channel or thread; MESSAGE_CREATE to the bots that see it. The message object."""
        with self.world.lock:
            actual = self.world.guild_of(channel_id)
            if guild_id is not None and actual != guild_id:
                raise ValueError(f"channel {channel_id} is in guild {actual}, not {guild_id}")
            text, users = self._mentioning(content, mentions)
            body: Json = {"content": text}
            if reply_to:
                body["message_reference"] = {"message_id": reply_to, "channel_id": channel_id}
            return _observed(self.world.post_message(channel_id, self._user(author_id), body, mentions=users))

    def user_forum_post(self, *, forum_id: str, author_id: str, title: str, content: str,
                        mentions: list[str] | tuple[str, ...] = ()) -> Json:
        """A person opens a forum post: THREAD_CREATE, then MESSAGE_CREATE of its starter message (same id).
        The thread object with the message under "message"."""
        with self.world.lock:
            if self.world.channel(forum_id)["type"] != 15:
                raise ValueError(f"channel {forum_id} is not a forum")
            thread = self.world.create_thread(forum_id, owner_id=author_id, name=title, rest=False)
            text, users = self._mentioning(content, mentions)
            message = self.world.post_message(thread["id"], self._user(author_id), {"content": text},
                                              mentions=users, message_id=thread["id"])
            return obj.wire(thread) | {"message": _observed(message)}

    def user_dm(self, token: str, *, author_id: str, content: str) -> Json:
        """A person writes to the bot in a DM (the DM channel is made on first use). The message object."""
        with self.world.lock:
            channel = self.world.dm_channel(token, author_id)
            return _observed(self.world.post_message(channel["id"], self._user(author_id), {"content": content}))

    def user_reaction(self, *, channel_id: str, message_id: str, user_id: str, emoji: str,
                      removed: bool = False) -> None:
        with self.world.lock:
            self.world.react(self.world.message(channel_id, message_id), user_id, emoji, removed=removed)

    def slash_command(self, token: str, *, guild_id: str, channel_id: str, user_id: str, name: str = "ask",
                      options: dict[str, object]) -> str:
        """A person runs a registered command (guild command first, else global); the interaction id."""
        if self.world.guild_of(channel_id) != guild_id:
            raise ValueError(f"channel {channel_id} is not in guild {guild_id}")
        return interactions.slash_command(self.world, token, channel_id=channel_id, user_id=user_id, name=name,
                                          options=options)

    def button_click(self, token: str, *, channel_id: str, message_id: str, user_id: str, custom_id: str) -> str:
        return interactions.button_click(self.world, token, channel_id=channel_id, message_id=message_id,
                                         user_id=user_id, custom_id=custom_id)

    # --- the gateway -----------------------------------------------------------------------------------------

    def deny_threads(self, channel_id: str) -> None:
        """Bots may not open threads in this channel (as without Create Public Threads): 403 code 50013."""
        with self.world.lock:
            self.world.no_threads.add(channel_id)

    def drop_connections(self, token: str | None = None) -> None:
        """Cut the bot's gateway sockets without a close frame; the sessions stay resumable (events buffer)."""
        self.world.gateway.drop(token)

    def invalidate_sessions(self, token: str | None = None) -> None:
        """Forget the sessions: a later RESUME is answered INVALID_SESSION (d=false), so the client re-IDENTIFYs."""
        self.world.gateway.invalidate(token)

    def request_reconnect(self, token: str | None = None) -> None:
        """Op 7 RECONNECT to the bot's connections (the client closes and RESUMEs)."""
        self.world.gateway.reconnect(token)

    def identifies(self, token: str) -> int:
        """IDENTIFY payloads received with this token (refused ones included)."""
        with self.world.lock:
            return self.world.gateway.identifies[token]

    def resumes(self, token: str) -> int:
        """Successful RESUMEs (each answered with the missed events and RESUMED)."""
        with self.world.lock:
            return self.world.gateway.resumes[token]

    def invalid_sessions(self, token: str) -> int:
        with self.world.lock:
            return self.world.gateway.invalid_sessions[token]

    def connected(self, token: str) -> bool:
        """An open gateway connection with a live (identified or resumed) session for this bot."""
        return self.world.gateway.connected(token)

    # --- observations ----------------------------------------------------------------------------------------

    def channel_messages(self, channel_id: str) -> list[Json]:
        """Oldest first, as they stand now, each with `_edits`; ephemeral interaction messages are not here."""
        with self.world.lock:
            return [_observed(m) for m in self.world.messages.get(channel_id, [])]

    def threads(self) -> list[Json]:
        """Threads the bots created over REST: id, name, parent_id, owner_id, starter_message_id (None for a
        thread without a message), type, guild_id."""
        with self.world.lock:
            made = [self.world.channels[t] for t in self.world.created_threads]
            return [obj.wire(t) | {"starter_message_id": t["id"] if self._has_starter(t) else None} for t in made]

    def _has_starter(self, thread: Json) -> bool:
        parent = self.world.channels[thread["parent_id"]]
        return parent["type"] == 15 or any(m["id"] == thread["id"] for m in self.world.messages[parent["id"]])

    def interaction_responses(self, interaction_id: str) -> list[Json]:
        """In order: {"kind": "callback"|"followup"|"edit_original"|"edit_followup"|"delete", "type": callback
        type or None, "content", "flags", "components", "embeds", "message_id", "json": the request body}."""
        with self.world.lock:
            return copy.deepcopy(self.world.interactions[interaction_id].responses)

    def commands(self, application_id: str) -> list[Json]:
        """Registered commands, global ones without and guild ones with "guild_id"."""
        with self.world.lock:
            return copy.deepcopy(self.world.commands.get(application_id, []))

    @property
    def calls(self) -> list[Call]:
        with self.world.lock:
            return list(self.world.calls)

    def wait_for(self, predicate: Callable[[], T], timeout: float = 20) -> T:
        """Poll predicate() until truthy (returned), else AssertionError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met within {timeout} s: {predicate}")
            time.sleep(0.01)


@pytest.fixture
def discord_fake() -> Iterator[FakeDiscord]:
    """A fresh fake Discord per test (one aiohttp server on a random port; starting it takes milliseconds)."""
    with FakeDiscord() as fake:
        yield fake
