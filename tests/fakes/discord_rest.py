"""The fake Discord REST API (/api/v10) as aiohttp routes: reads, messages, threads, DMs, commands, interactions."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tests.fakes import discord_objects as obj
from tests.fakes.discord_objects import Bot, Json
from tests.fakes.discord_state import ApiError, Call, World

Handler = Callable[[web.Request, World, Bot | None, Json], Json | list[Json] | None]
routes: list[tuple[str, str, Handler, bool]] = []  # method, path, handler, needs a bot token


def route(method: str, path: str, *, auth: bool = True) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        routes.append((method, path, handler, auth))
        return handler
    return register


def _json(payload: Any, status: int = 200) -> web.Response:
    # discord.py only decodes a body whose Content-Type is exactly application/json (no charset parameter).
    return web.Response(body=json.dumps(payload).encode(), status=status, headers={"Content-Type": "application/json"})


async def _body(request: web.Request) -> Json:
    """JSON, or multipart with `payload_json` and files (recorded as attachments), as discord.py sends them."""
    if not request.can_read_body:
        return {}
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        body = json.loads(str(form.get("payload_json") or "{}"))
        files = [(name, part) for name, part in form.items() if name.startswith("files[")]
        body["attachments"] = [{"id": obj.snowflake(), "filename": part.filename, "size": len(part.file.read()),
                                "url": f"http://127.0.0.1/attachments/{part.filename}", "proxy_url": "",
                                "content_type": part.content_type}
                               for _, part in files if isinstance(part, web.FileField)]
        return body
    text = await request.text()
    return json.loads(text) if text.strip() else {}


def _token_bot(world: World, request: web.Request) -> tuple[str | None, Bot | None]:
    header = request.headers.get("Authorization", "")
    token = header.removeprefix("Bot ").strip() if header.startswith("Bot ") else None
    return token, world.bots.get(token or "")


def _interaction_bot(world: World, request: web.Request) -> str | None:
    token = request.match_info.get("itoken")
    found = next((i for i in world.interactions.values() if i.token == token), None)
    return found.bot_token if found else None


def make_handler(world: World, handler: Handler, auth: bool) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def serve(request: web.Request) -> web.Response:
        body = await _body(request)
        token, bot = _token_bot(world, request)
        path = request.path.removeprefix("/api/v10")
        with world.lock:
            caller = token if auth else _interaction_bot(world, request)
            world.calls.append(Call(request.method, path, body or None, time.monotonic(), caller,
                                    dict(request.query)))
        if auth and bot is None:
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        try:
            result = handler(request, world, bot, body)
        except ApiError as error:
            return _json({"message": error.message, "code": error.code}, error.status)
        return web.Response(status=204) if result is None else _json(result)
    return serve


def build_app(world: World, gateway: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/", gateway)
    for method, path, handler, auth in routes:
        app.router.add_route(method, "/api/v10" + path, make_handler(world, handler, auth))
    return app


def _me(bot: Bot | None) -> Bot:
    assert bot is not None  # the auth check ran
    return bot


def _seen(world: World, bot: Bot, message: Json) -> Json:
    """REST reads obey the app's message-content approval the way the gateway obeys the identified intent."""
    visible = obj.sees_content(message, bot_user_id=bot.user_id, content_intent=bot.message_content)
    return obj.wire(message) if visible else obj.as_seen_without_content(obj.wire(message))


def _guild(world: World, bot: Bot, guild_id: str) -> obj.Guild:
    guild = world.guilds.get(guild_id)
    if guild is None:
        raise ApiError(404, 10004, "Unknown Guild")
    if bot.token not in guild.bots:
        raise ApiError(403, 50001, "Missing Access")
    return guild


def _channel_view(world: World, bot: Bot, channel: Json) -> Json:
    return world.thread_for(channel, bot.user_id) if channel["type"] in obj.THREAD_TYPES else obj.wire(channel)


# --- reads -------------------------------------------------------------------------------------------------------

@route("GET", "/gateway", auth=False)
def get_gateway(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return {"url": world.gateway_url}


@route("GET", "/gateway/bot")
def get_gateway_bot(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    limit = {"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}
    return {"url": world.gateway_url, "shards": 1, "session_start_limit": limit}


@route("GET", "/users/@me")
def get_me(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return _me(bot).user() | {"verified": True, "mfa_enabled": False, "flags": 0, "email": None}


@route("GET", "/users/{user_id}")
def get_user(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return dict(world.user(request.match_info["user_id"]))


@route("GET", "/oauth2/applications/@me")
def get_application(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return obj.application_object(_me(bot))


@route("GET", "/applications/@me")
def get_application_alias(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return obj.application_object(_me(bot))


@route("GET", "/users/@me/guilds")
def get_my_guilds(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    me = _me(bot)
    with world.lock:
        return [{"id": g.id, "name": g.name, "icon": None, "banner": None, "owner": False,
                 "permissions": str(obj.EVERYONE_PERMISSIONS), "features": []}
                for g in world.guilds.values() if me.token in g.bots]


@route("GET", "/guilds/{guild_id}")
def get_guild(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    with world.lock:
        guild = _guild(world, _me(bot), request.match_info["guild_id"])
        count = len(guild.bots) + len(world.users)
        return obj.guild_object(guild, owner_id=next(iter(world.users), _me(bot).user_id)) | {
            "approximate_member_count": count, "approximate_presence_count": count}


@route("GET", "/guilds/{guild_id}/channels")
def get_guild_channels(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    with world.lock:
        guild = _guild(world, _me(bot), request.match_info["guild_id"])
        return [obj.wire(world.channels[c]) for c in guild.channel_ids]


@route("GET", "/guilds/{guild_id}/threads/active")
def get_active_threads(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    with world.lock:
        guild = _guild(world, _me(bot), request.match_info["guild_id"])
        threads = [world.thread_for(c, _me(bot).user_id) for c in world.channels.values()
                   if c["type"] in obj.THREAD_TYPES and c["guild_id"] == guild.id]
        return {"threads": [{k: v for k, v in t.items() if k != "member"} for t in threads],
                "members": [t["member"] for t in threads if "member" in t]}


@route("GET", "/channels/{channel_id}")
def get_channel(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    with world.lock:
        return _channel_view(world, _me(bot), world.check_access(_me(bot).token, request.match_info["channel_id"]))


@route("GET", "/channels/{channel_id}/messages")
def get_messages(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    """Newest first, like Discord; `before` / `after` by id, `limit` up to 100."""
    channel_id = request.match_info["channel_id"]
    with world.lock:
        world.check_access(_me(bot).token, channel_id)
        found = list(world.messages.get(channel_id, []))
    before, after = request.query.get("before"), request.query.get("after")
    if before:
        found = [m for m in found if int(m["id"]) < int(before)]
    if after:
        found = [m for m in found if int(m["id"]) > int(after)]
    limit = min(int(request.query.get("limit", 50)), 100)
    chosen = found[:limit] if after else found[-limit:]
    return [_seen(world, _me(bot), m) for m in reversed(chosen) if not m["flags"] & obj.EPHEMERAL]


@route("GET", "/channels/{channel_id}/messages/{message_id}")
def get_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    with world.lock:
        world.check_access(_me(bot).token, request.match_info["channel_id"])
        return _seen(world, _me(bot), world.message(request.match_info["channel_id"],
                                                    request.match_info["message_id"]))
