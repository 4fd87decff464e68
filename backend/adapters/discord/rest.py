"""The few Discord REST reads the dashboard makes (who the bot is, its servers and channels), through discord.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
import discord
from discord.http import HTTPClient, Route

from backend.adapters.discord.types import BotIdentity, DiscordChannel, DiscordError, Guild

__all__ = ["BOT_PERMISSIONS", "BotIdentity", "DiscordChannel", "DiscordError", "DiscordRest", "Guild", "invite_url"]

DEFAULT_API_URL = "https://discord.com/api/v10"
TIMEOUT_S = 10  # one request; Discord answers in well under a second, and a hung call must not hold a web worker
TOTAL_TIMEOUT_S = 30  # all the calls of one read, retries of discord.py on 5xx included
GUILD_PAGE = 200  # Discord's largest page of GET /users/@me/guilds
MAX_GUILDS = 1000  # a guru's bot in more servers than this is not a setup the dashboard lists
TEXT_TYPES = {discord.ChannelType.text.value: "text", discord.ChannelType.news.value: "text",
              discord.ChannelType.forum.value: "forum"}
CATEGORY = discord.ChannelType.category.value
# Application flags saying the Message Content intent is on (verified apps; apps in under 100 servers).
MESSAGE_CONTENT_FLAGS = discord.ApplicationFlags(gateway_message_content=True,
                                                 gateway_message_content_limited=True).value
SCOPES = ("bot", "applications.commands")  # the bot user, and the /ask slash command
# Exactly what the bot does, nothing more (a server admin sees this list on Discord's authorize page):
BOT_PERMISSIONS = discord.Permissions(
    view_channel=True,  # see the allowed channels and receive their messages
    send_messages=True,  # post the "thinking…" message and the answer (editing its own messages needs nothing)
    create_public_threads=True,  # open a public thread named after the question, from the question's message
    send_messages_in_threads=True,  # answer and follow up inside that thread (and in forum posts)
    read_message_history=True,  # fetch the question a thread starts from, and earlier messages of a thread
)

T = TypeVar("T")


class _HTTP(HTTPClient):
    """discord.py's client with this adapter's base URL and a per-request timeout.

    discord.py builds every URL from the class attribute Route.BASE; the web process may talk to several bases
    (tests), so each request's URL is re-rooted here instead of changing that process-wide attribute.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, base_url: str) -> None:
        super().__init__(loop)
        self._base_url = base_url.rstrip("/")

    async def request(self, route: Route, **kwargs: Any) -> Any:
        if route.url.startswith(Route.BASE):
            route.url = self._base_url + route.url[len(Route.BASE):]
        kwargs.setdefault("timeout", aiohttp.ClientTimeout(total=TIMEOUT_S))
        return await super().request(route, **kwargs)


def _error(exc: BaseException) -> DiscordError:
    if isinstance(exc, discord.LoginFailure):
        return DiscordError("invalid_token", "Discord did not accept the bot token.")
    if isinstance(exc, discord.HTTPException):
        if exc.status == 401:
            return DiscordError("invalid_token", "Discord did not accept the bot token.")
        if exc.status == 403:
            return DiscordError("forbidden", f"Discord refused: {exc.text or 'missing access'}"[:300])
        return DiscordError(f"http_{exc.status}", f"Discord answered {exc.status}: {exc.text}"[:300])
    return DiscordError("connection_failed", "Discord could not be reached.")


class DiscordRest:
    """Synchronous reads with one bot token; each call runs discord.py in a fresh event loop and closes it."""

    def __init__(self, token: str, *, base_url: str = DEFAULT_API_URL) -> None:
        self._token = token
        self._base_url = base_url

    def _run(self, work: Callable[[_HTTP, dict[str, Any]], Awaitable[T]]) -> T:
        async def session() -> T:
            http = _HTTP(asyncio.get_running_loop(), self._base_url)
            try:
                async with asyncio.timeout(TOTAL_TIMEOUT_S):
                    me = await http.static_login(self._token)  # opens the session; GET /users/@me checks the token
                    return await work(http, dict(me))
            finally:
                await http.close()

        try:
            return asyncio.run(session())
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _error(exc) from exc

    def identity(self) -> BotIdentity:
        """The bot user (GET /users/@me) and its application (GET /oauth2/applications/@me)."""
        async def work(http: _HTTP, me: dict[str, Any]) -> BotIdentity:
            app = await http.application_info()
            return BotIdentity(user_id=str(me["id"]), name=str(me.get("global_name") or me["username"]),
                               application_id=str(app["id"]),
                               message_content=bool(int(app.get("flags") or 0) & MESSAGE_CONTENT_FLAGS))
        return self._run(work)

    def guilds(self) -> list[Guild]:
        """The servers the bot is a member of, by name."""
        async def work(http: _HTTP, _me: dict[str, Any]) -> list[Guild]:
            return await _guilds(http)
        return self._run(work)

    def channels(self, guild_id: str) -> list[DiscordChannel]:
        """A server's text, announcement and forum channels in Discord's order (voice, stages, categories left out)."""
        async def work(http: _HTTP, _me: dict[str, Any]) -> list[DiscordChannel]:
            return await _channels(http, guild_id)
        return self._run(work)

    def servers(self, *, max_guilds: int) -> list[tuple[Guild, list[DiscordChannel]]]:
        """guilds() with the channels() of the first `max_guilds`, over one session.

        A server the bot left between the two calls lists no channels instead of failing the whole listing.
        """
        async def work(http: _HTTP, _me: dict[str, Any]) -> list[tuple[Guild, list[DiscordChannel]]]:
            found = []
            for index, guild in enumerate(await _guilds(http)):
                channels: list[DiscordChannel] = []
                if index < max_guilds:
                    with contextlib.suppress(discord.Forbidden, discord.NotFound):
                        channels = await _channels(http, guild.id)
                found.append((guild, channels))
            return found
        return self._run(work)


async def _guilds(http: _HTTP) -> list[Guild]:
    found: list[Guild] = []
    after: str | None = None
    while len(found) < MAX_GUILDS:
        page = await http.get_guilds(GUILD_PAGE, after=after, with_counts=False)
        found += [Guild(id=str(g["id"]), name=str(g.get("name", ""))) for g in page]
        if len(page) < GUILD_PAGE:
            break
        after = str(page[-1]["id"])  # pages come in id order
    return sorted(found, key=lambda g: (g.name.casefold(), g.id))


async def _channels(http: _HTTP, guild_id: str) -> list[DiscordChannel]:
    listed: list[Any] = await http.get_all_guild_channels(guild_id)  # typed dicts: read as plain ones
    return _text_channels([dict(c) for c in listed])


def _text_channels(raw: list[dict[str, Any]]) -> list[DiscordChannel]:
    categories = {str(c["id"]): c for c in raw if c.get("type") == CATEGORY}

    def order(channel: dict[str, Any]) -> tuple[int, str, int, str]:
        # Discord lists channels without a category first, then each category in its position.
        parent = categories.get(str(channel.get("parent_id") or ""))
        category_at = int(parent.get("position", 0)) if parent else -1
        return category_at, str(channel.get("parent_id") or ""), int(channel.get("position", 0)), str(channel["id"])

    listed = sorted((c for c in raw if c.get("type") in TEXT_TYPES), key=order)
    return [DiscordChannel(id=str(c["id"]), name=str(c.get("name", "")), kind=TEXT_TYPES[int(c["type"])],
                           category=str(categories.get(str(c.get("parent_id") or ""), {}).get("name", "")))
            for c in listed]


def invite_url(application_id: str) -> str:
    """Discord's authorize page that adds the bot to a server with exactly BOT_PERMISSIONS and /ask."""
    return discord.utils.oauth_url(application_id, permissions=BOT_PERMISSIONS, scopes=SCOPES)
