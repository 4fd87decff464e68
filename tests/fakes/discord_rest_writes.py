"""The fake Discord REST API's writes: messages, threads, reactions, DMs, application commands, interactions."""

from __future__ import annotations

import copy
from urllib.parse import unquote

from aiohttp import web

from tests.fakes import discord_interactions as interactions
from tests.fakes import discord_objects as obj
from tests.fakes.discord_objects import Bot, Json
from tests.fakes.discord_rest import _me, _seen, route
from tests.fakes.discord_state import ApiError, World

MAX_CONTENT = 2000


def _check_content(body: Json) -> None:
    if len(str(body.get("content") or "")) > MAX_CONTENT:
        raise ApiError(400, 50035, "Invalid Form Body (content: Must be 2000 or fewer in length.)")


def _own_message(world: World, bot: Bot, request: web.Request) -> Json:
    world.check_access(bot.token, request.match_info["channel_id"])
    message = world.message(request.match_info["channel_id"], request.match_info["message_id"])
    if message["author"]["id"] != bot.user_id:
        raise ApiError(403, 50005, "Cannot edit a message authored by another user")
    return message


# --- messages ----------------------------------------------------------------------------------------------------

@route("POST", "/channels/{channel_id}/messages")
def post_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    me = _me(bot)
    _check_content(body)
    if not (body.get("content") or body.get("embeds") or body.get("components") or body.get("attachments")):
        raise ApiError(400, 50006, "Cannot send an empty message")
    with world.lock:
        world.check_access(me.token, request.match_info["channel_id"])
        mentions = [world.users[m] for m in world.users if f"<@{m}>" in str(body.get("content") or "")]
        return obj.wire(world.post_message(request.match_info["channel_id"], me.user(), body, mentions=mentions))


@route("PATCH", "/channels/{channel_id}/messages/{message_id}")
def patch_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    _check_content(body)
    with world.lock:
        return obj.wire(world.edit_message(_own_message(world, _me(bot), request), body))


@route("DELETE", "/channels/{channel_id}/messages/{message_id}")
def delete_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    with world.lock:
        world.delete_message(_own_message(world, _me(bot), request))


@route("POST", "/channels/{channel_id}/typing")
def typing(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    world.check_access(_me(bot).token, request.match_info["channel_id"])


@route("PUT", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
def add_reaction(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    _react(request, world, _me(bot), removed=False)


@route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
def remove_reaction(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    _react(request, world, _me(bot), removed=True)


def _react(request: web.Request, world: World, bot: Bot, *, removed: bool) -> None:
    with world.lock:
        world.check_access(bot.token, request.match_info["channel_id"])
        message = world.message(request.match_info["channel_id"], request.match_info["message_id"])
        world.react(message, bot.user_id, unquote(request.match_info["emoji"]), removed=removed)


# --- threads and DMs ---------------------------------------------------------------------------------------------

@route("POST", "/channels/{channel_id}/messages/{message_id}/threads")
def thread_from_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    me = _me(bot)
    with world.lock:
        world.check_access(me.token, request.match_info["channel_id"])
        message = world.message(request.match_info["channel_id"], request.match_info["message_id"])
        thread = world.thread_from_message(message, owner_id=me.user_id, name=str(body.get("name") or "thread"),
                                           auto_archive_duration=int(body.get("auto_archive_duration") or 1440))
        return world.thread_for(thread, me.user_id)


@route("POST", "/channels/{channel_id}/threads")
def start_thread(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    """A thread without a message in a text channel, or a forum post (thread + starter message, same id)."""
    me = _me(bot)
    with world.lock:
        parent = world.check_access(me.token, request.match_info["channel_id"])
        name, archive = str(body.get("name") or "thread"), int(body.get("auto_archive_duration") or 1440)
        if parent["type"] != 15:
            thread = world.create_thread(parent["id"], owner_id=me.user_id, name=name,
                                         auto_archive_duration=archive, thread_type=int(body.get("type") or 11))
            return world.thread_for(thread, me.user_id)
        starter = body.get("message") or {}
        _check_content(starter)
        thread = world.create_thread(parent["id"], owner_id=me.user_id, name=name, auto_archive_duration=archive)
        thread["applied_tags"] = [str(t) for t in body.get("applied_tags") or []]
        message = world.post_message(thread["id"], me.user(), starter, message_id=thread["id"])
        return world.thread_for(thread, me.user_id) | {"message": obj.wire(message)}


@route("PUT", "/channels/{channel_id}/thread-members/@me")
def join_thread(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    with world.lock:
        thread = world.check_access(_me(bot).token, request.match_info["channel_id"])
        if thread["type"] not in obj.THREAD_TYPES:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        thread["_members"].add(_me(bot).user_id)


@route("POST", "/users/@me/channels")
def open_dm(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    return obj.wire(world.dm_channel(_me(bot).token, str(body.get("recipient_id"))))


# --- application commands ----------------------------------------------------------------------------------------

def _app(request: web.Request, bot: Bot) -> str:
    app = request.match_info["app_id"]
    if app != bot.application_id:
        raise ApiError(403, 50001, "Missing Access")
    return app


def _put_commands(world: World, app: str, guild_id: str | None, body: object) -> list[Json]:
    """Bulk overwrite: names already registered keep their ids, as Discord does."""
    if not isinstance(body, list):
        raise ApiError(400, 50035, "Invalid Form Body (expected an array of commands)")
    with world.lock:
        current = world.commands.setdefault(app, [])
        old = {c["name"]: c for c in current if c.get("guild_id") == guild_id}
        made = []
        for spec in body:
            known = old.get(spec["name"])
            command = {"description": "", "options": [], "default_member_permissions": None, "nsfw": False,
                       "type": 1, **copy.deepcopy(spec), "id": known["id"] if known else obj.snowflake(),
                       "application_id": app, "version": obj.snowflake()}
            if guild_id is not None:
                command["guild_id"] = guild_id
            made.append(command)
        world.commands[app] = [c for c in current if c.get("guild_id") != guild_id] + made
        return copy.deepcopy(made)


@route("PUT", "/applications/{app_id}/commands")
def put_global_commands(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    return _put_commands(world, _app(request, _me(bot)), None, body)


@route("PUT", "/applications/{app_id}/guilds/{guild_id}/commands")
def put_guild_commands(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    return _put_commands(world, _app(request, _me(bot)), request.match_info["guild_id"], body)


@route("GET", "/applications/{app_id}/commands")
def get_global_commands(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    app = _app(request, _me(bot))
    with world.lock:
        return [copy.deepcopy(c) for c in world.commands.get(app, []) if c.get("guild_id") is None]


@route("GET", "/applications/{app_id}/guilds/{guild_id}/commands")
def get_guild_commands(request: web.Request, world: World, bot: Bot | None, body: Json) -> list[Json]:
    app, guild_id = _app(request, _me(bot)), request.match_info["guild_id"]
    with world.lock:
        return [copy.deepcopy(c) for c in world.commands.get(app, []) if c.get("guild_id") == guild_id]


# --- interaction responses (authenticated by the interaction token in the path) ---------------------------------

@route("POST", "/interactions/{interaction_id}/{itoken}/callback", auth=False)
def interaction_callback(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json | None:
    found = interactions.lookup(world, token=request.match_info["itoken"],
                                interaction_id=request.match_info["interaction_id"])
    _check_content(body.get("data") or {})
    answer = interactions.callback(world, found, body)
    return answer if request.query.get("with_response") in ("1", "true", "True") else None


@route("POST", "/webhooks/{app_id}/{itoken}", auth=False)
def followup(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json | None:
    found = interactions.lookup(world, token=request.match_info["itoken"], application_id=request.match_info["app_id"])
    _check_content(body)
    message = interactions.followup(world, found, body)
    return obj.wire(message) if request.query.get("wait") in ("1", "true", "True") else None


@route("GET", "/webhooks/{app_id}/{itoken}/messages/{message_id}", auth=False)
def get_webhook_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    found = interactions.lookup(world, token=request.match_info["itoken"], application_id=request.match_info["app_id"])
    mid = request.match_info["message_id"]
    with world.lock:
        target = interactions.original(world, found) if mid == "@original" else found.followups.get(mid)
        if target is None:
            raise ApiError(404, 10008, "Unknown Message")
        return _seen(world, world.bots[found.bot_token], target)


@route("PATCH", "/webhooks/{app_id}/{itoken}/messages/{message_id}", auth=False)
def edit_webhook_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> Json:
    found = interactions.lookup(world, token=request.match_info["itoken"], application_id=request.match_info["app_id"])
    _check_content(body)
    return obj.wire(interactions.edit(world, found, request.match_info["message_id"], body))


@route("DELETE", "/webhooks/{app_id}/{itoken}/messages/{message_id}", auth=False)
def delete_webhook_message(request: web.Request, world: World, bot: Bot | None, body: Json) -> None:
    found = interactions.lookup(world, token=request.match_info["itoken"], application_id=request.match_info["app_id"])
    interactions.delete(world, found, request.match_info["message_id"])
