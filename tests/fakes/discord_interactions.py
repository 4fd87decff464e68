"""Fake Discord interactions: INTERACTION_CREATE payloads (slash commands, components) and their responses."""

from __future__ import annotations

import copy
import secrets
from typing import Any

from tests.fakes import discord_objects as obj
from tests.fakes.discord_gateway import constant
from tests.fakes.discord_objects import Bot, Json
from tests.fakes.discord_state import ApiError, Interaction, World

_OPTION_TYPES: list[tuple[type, int]] = [(bool, 5), (int, 4), (float, 10), (str, 3)]  # bool before int: a subclass
ACK_TYPES = {1, 4, 5, 6, 7, 8, 9, 10, 12}


def _option_type(value: object, declared: int | None) -> int:
    if declared is not None:
        return declared
    return next((t for kind, t in _OPTION_TYPES if isinstance(value, kind)), 3)


def _registered(world: World, bot: Bot, name: str, guild_id: str) -> Json:
    """The command as the bot registered it (a guild command wins over a global one, as in Discord's client)."""
    commands = world.commands.get(bot.application_id, [])
    for wanted in (guild_id, None):
        for command in commands:
            if command["name"] == name and command.get("guild_id") == wanted:
                return command
    raise ValueError(f"application {bot.application_id} registered no command {name!r} for guild {guild_id}")


def _start(world: World, bot: Bot, *, kind: int, channel_id: str, user_id: str, data: Json,
           message: Json | None = None) -> tuple[Interaction, Json]:
    channel = world.check_access(bot.token, channel_id)
    guild_id = channel.get("guild_id")
    interaction = Interaction(id=obj.snowflake(), token=f"aW50ZXJhY3Rpb24{secrets.token_urlsafe(24)}",
                              bot_token=bot.token, application_id=bot.application_id, channel_id=channel_id,
                              guild_id=guild_id, user_id=user_id, message_id=message["id"] if message else None)
    user = world.user(user_id)
    payload: Json = {"id": interaction.id, "application_id": bot.application_id, "type": kind,
                     "token": interaction.token, "version": 1, "data": data, "channel_id": channel_id,
                     "channel": obj.wire(channel), "app_permissions": str(obj.EVERYONE_PERMISSIONS),
                     "locale": "en-US", "entitlements": [], "attachment_size_limit": 10 * 1024 * 1024,
                     "context": 0 if guild_id else 1,
                     "authorizing_integration_owners": {"0": guild_id} if guild_id else {"1": user_id}}
    if guild_id:
        payload |= {"guild_id": guild_id, "guild_locale": "en-US",
                    "guild": {"id": guild_id, "locale": "en-US", "features": []},
                    "member": obj.member_object(user, obj.now_iso(), permissions=True)}
    else:
        payload["user"] = user
    if message is not None:
        payload["message"] = obj.wire(message)
    world.interactions[interaction.id] = interaction
    return interaction, payload


def slash_command(world: World, token: str, *, channel_id: str, user_id: str, name: str,
                  options: dict[str, object]) -> str:
    """A person runs /name in a channel: INTERACTION_CREATE type 2 to the bot's sessions; the interaction id."""
    with world.lock:
        bot = world.bots[token]
        command = _registered(world, bot, name, str(world.guild_of(channel_id)))
        declared = {o["name"]: o.get("type") for o in command.get("options") or []}
        data: Json = {"id": command["id"], "name": name, "type": command.get("type", 1),
                      "options": [{"name": k, "type": _option_type(v, declared.get(k)), "value": v}
                                  for k, v in options.items()]}
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        interaction, payload = _start(world, bot, kind=2, channel_id=channel_id, user_id=user_id, data=data)
        world.gateway.dispatch(token, "INTERACTION_CREATE", constant(payload))
        return interaction.id


def _component_type(components: list[Json], custom_id: str) -> int | None:
    for component in components:
        if component.get("custom_id") == custom_id:
            return int(component["type"])
        found = _component_type(component.get("components") or [], custom_id)
        if found is not None:
            return found
    return None


def button_click(world: World, token: str, *, channel_id: str, message_id: str, user_id: str,
                 custom_id: str) -> str:
    """A person clicks a component of a message: INTERACTION_CREATE type 3 with the message; the interaction id."""
    with world.lock:
        message = world.message(channel_id, message_id)
        component_type = _component_type(message.get("components") or [], custom_id)
        if component_type is None:
            raise ValueError(f"message {message_id} has no component with custom_id {custom_id!r}")
        data: Json = {"custom_id": custom_id, "component_type": component_type}
        if component_type != 2:
            data["values"] = []
        interaction, payload = _start(world, world.bots[token], kind=3, channel_id=channel_id, user_id=user_id,
                                      data=data, message=message)
        world.gateway.dispatch(token, "INTERACTION_CREATE", constant(payload))
        return interaction.id


def lookup(world: World, *, token: str, interaction_id: str | None = None,
           application_id: str | None = None) -> Interaction:
    with world.lock:
        found = next((i for i in world.interactions.values() if i.token == token), None)
    if found is None or interaction_id not in (None, found.id) or application_id not in (None, found.application_id):
        raise ApiError(404, 10062 if interaction_id else 10015, "Unknown interaction" if interaction_id
                       else "Unknown Webhook")
    return found


def _record(interaction: Interaction, kind: str, body: Json, *, callback_type: int | None = None,
            message: Json | None = None) -> None:
    fields = body.get("data") or {} if callback_type is not None else body
    interaction.responses.append({
        "kind": kind, "type": callback_type, "content": fields.get("content"), "flags": int(fields.get("flags") or 0),
        "components": fields.get("components"), "embeds": fields.get("embeds"),
        "message_id": message["id"] if message else None, "json": copy.deepcopy(body)})


def _new_message(world: World, interaction: Interaction, body: Json, *, loading: bool = False) -> Json:
    bot = world.bots[interaction.bot_token]
    flags = int(body.get("flags") or 0) | (obj.LOADING if loading else 0)
    metadata = {"id": interaction.id, "type": 3 if interaction.message_id else 2,
                "user": world.users[interaction.user_id], "authorizing_integration_owners": {}}
    extra: dict[str, Any] = {"webhook_id": bot.application_id, "application_id": bot.application_id,
                             "interaction_metadata": metadata, "type": 0 if interaction.message_id else 20}
    if flags & obj.EPHEMERAL:  # never in the channel: only the person who ran the command sees it
        message = obj.message_object(channel_id=interaction.channel_id, author=bot.user(),
                                     content=str(body.get("content") or ""), guild_id=interaction.guild_id, **extra)
        message |= {"flags": flags, "components": copy.deepcopy(body.get("components") or []),
                    "embeds": copy.deepcopy(body.get("embeds") or [])}
        return message
    return world.post_message(interaction.channel_id, bot.user(), body | {"flags": flags}, **extra)


def callback(world: World, interaction: Interaction, body: Json) -> Json:
    """POST /interactions/{id}/{token}/callback; the InteractionCallbackResponse (`with_response`)."""
    with world.lock:
        if interaction.responded:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        kind, data = int(body.get("type") or 0), body.get("data") or {}
        if kind not in ACK_TYPES:
            raise ApiError(400, 50035, "Invalid Form Body (type)")
        interaction.responded = True
        message: Json | None = None
        if kind in (4, 5):
            interaction.original = message = _new_message(world, interaction, data, loading=kind == 5)
        elif kind == 7 and interaction.message_id:
            message = world.edit_message(world.message(interaction.channel_id, interaction.message_id), data)
        _record(interaction, "callback", body, callback_type=kind, message=message)
        flags = int(message["flags"]) if message else 0
        answer: Json = {"interaction": {"id": interaction.id, "type": 3 if interaction.message_id else 2,
                                        "response_message_loading": kind == 5,
                                        "response_message_ephemeral": bool(flags & obj.EPHEMERAL)},
                        "resource": {"type": kind}}
        if message is not None:
            answer["interaction"]["response_message_id"] = message["id"]
            answer["resource"]["message"] = obj.wire(message)
        return answer


def original(world: World, interaction: Interaction) -> Json:
    """The @original message: the response message, or for component updates the clicked message."""
    if interaction.original is not None:
        return interaction.original
    if interaction.message_id and interaction.responded:
        return world.message(interaction.channel_id, interaction.message_id)
    raise ApiError(404, 10008, "Unknown Message")


def edit(world: World, interaction: Interaction, message_id: str, body: Json) -> Json:
    """PATCH /webhooks/{app}/{token}/messages/{@original|id}."""
    with world.lock:
        target = original(world, interaction) if message_id == "@original" else interaction.followups.get(message_id)
        if target is None:
            raise ApiError(404, 10008, "Unknown Message")
        world.edit_message(target, body)
        _record(interaction, "edit_original" if message_id == "@original" else "edit_followup", body, message=target)
        return target


def followup(world: World, interaction: Interaction, body: Json) -> Json:
    """POST /webhooks/{app}/{token}: a follow-up message (ephemeral with flags 64)."""
    with world.lock:
        if not interaction.responded:
            raise ApiError(404, 10015, "Unknown Webhook")
        message = _new_message(world, interaction, body)
        interaction.followups[message["id"]] = message
        _record(interaction, "followup", body, message=message)
        return message


def delete(world: World, interaction: Interaction, message_id: str) -> None:
    with world.lock:
        target = original(world, interaction) if message_id == "@original" else interaction.followups.get(message_id)
        if target is None:
            raise ApiError(404, 10008, "Unknown Message")
        if not target["flags"] & obj.EPHEMERAL:
            world.delete_message(target)
        _record(interaction, "delete", {}, message=target)
