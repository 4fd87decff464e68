"""The fake Discord's world (bots, guilds, channels, threads, messages) and the gateway events its changes cause."""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tests.fakes import discord_objects as obj
from tests.fakes.discord_gateway import Gateway, Session, constant, needs
from tests.fakes.discord_objects import Bot, Guild, Json


class Call(NamedTuple):
    """One REST request: path is relative to /api/v10 (no query); token the bot it authenticated as (for the
    token-less interaction and webhook routes: the bot the interaction belongs to), else None."""

    method: str
    path: str
    json: Any
    at: float
    token: str | None
    query: dict[str, str] = {}  # noqa: RUF012  (a NamedTuple default, never mutated)


class ApiError(Exception):
    """A Discord error response: HTTP status, JSON error code and message."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class Interaction:
    id: str
    token: str
    bot_token: str
    application_id: str
    channel_id: str
    guild_id: str | None
    user_id: str = ""
    message_id: str | None = None          # a component's message: what types 6/7 and @original edit
    original: Json | None = None           # the response message (types 4/5)
    responded: bool = False
    responses: list[Json] = field(default_factory=list)
    followups: dict[str, Json] = field(default_factory=dict)


class World:
    """Everything the fake knows, under one re-entrant lock shared with the gateway."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.gateway = Gateway(self.lock, self._bot, self._ready, self._guild_creates)
        self.gateway_url = ""
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.bots: dict[str, Bot] = {}
            self.users: dict[str, Json] = {}
            self.guilds: dict[str, Guild] = {}
            self.channels: dict[str, Json] = {}
            self.messages: dict[str, list[Json]] = {}
            self.created_threads: list[str] = []
            self.no_threads: set[str] = set()  # channels where the bots lack Create Public Threads
            self.commands: dict[str, list[Json]] = {}
            self.interactions: dict[str, Interaction] = {}
            self.calls: list[Call] = []
            self.gateway.drop(None)
            self.gateway.invalidate(None)
            self.gateway.identifies.clear()
            self.gateway.resumes.clear()
            self.gateway.invalid_sessions.clear()

    # --- lookups ---------------------------------------------------------------------------------------------

    def _bot(self, token: str) -> Bot | None:
        with self.lock:
            return self.bots.get(token)

    def bot_by_app(self, application_id: str) -> Bot | None:
        with self.lock:
            return next((b for b in self.bots.values() if b.application_id == application_id), None)

    def channel(self, channel_id: str) -> Json:
        with self.lock:
            channel = self.channels.get(channel_id)
        if channel is None:
            raise ApiError(404, 10003, "Unknown Channel")
        return channel

    def guild_of(self, channel_id: str) -> str | None:
        channel = self.channel(channel_id)
        return channel.get("guild_id")

    def audience(self, channel_id: str) -> list[str]:
        """Tokens of the bots that see a channel: the guild's bots, or the one bot of a DM."""
        channel = self.channel(channel_id)
        if channel["type"] == 1:
            return [str(channel["_bot"])]
        return list(self.guilds[channel["guild_id"]].bots)

    def check_access(self, token: str, channel_id: str) -> Json:
        channel = self.channel(channel_id)
        if token not in self.audience(channel_id):
            raise ApiError(403, 50001, "Missing Access")
        return channel

    def message(self, channel_id: str, message_id: str) -> Json:
        with self.lock:
            found = next((m for m in self.messages.get(channel_id, []) if m["id"] == message_id), None)
        if found is None:
            raise ApiError(404, 10008, "Unknown Message")
        return found

    def user(self, user_id: str) -> Json:
        with self.lock:
            if user_id not in self.users:
                raise ApiError(404, 10013, "Unknown User")
            return self.users[user_id]

    # --- gateway payloads ----------------------------------------------------------------------------------

    def _ready(self, bot: Bot, session_id: str) -> Json:
        with self.lock:
            guilds = [{"id": g.id, "unavailable": True} for g in self.guilds.values() if bot.token in g.bots]
        user = bot.user() | {"verified": True, "mfa_enabled": False, "flags": 0, "email": None}
        return {"v": 10, "user": user, "guilds": guilds, "session_id": session_id, "session_type": "normal",
                "resume_gateway_url": self.gateway_url, "private_channels": [], "relationships": [],
                "presences": [], "guild_join_requests": [], "user_settings": {}, "geo_ordered_rtc_regions": [],
                "application": {"id": bot.application_id,
                                "flags": obj.GATEWAY_MESSAGE_CONTENT if bot.message_content else 0}}

    def _guild_creates(self, bot: Bot) -> list[Json]:
        with self.lock:
            return [self.guild_create(g, bot) for g in self.guilds.values() if bot.token in g.bots]

    def guild_create(self, guild: Guild, bot: Bot) -> Json:
        channels = [obj.wire(self.channels[c]) for c in guild.channel_ids]
        threads = [self.thread_for(t, bot.user_id) for t in self.channels.values()
                   if t["type"] in obj.THREAD_TYPES and t["guild_id"] == guild.id]
        members = [obj.member_object(self.bots[t].user(), guild.joined_at) for t in guild.bots]
        owner = next(iter(self.users), bot.user_id)
        return obj.guild_object(guild, owner_id=owner) | {
            "channels": channels, "threads": threads, "members": members, "member_count": len(members),
            "large": False, "unavailable": False, "joined_at": guild.joined_at, "voice_states": [],
            "presences": [], "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": []}

    def thread_for(self, thread: Json, bot_user_id: str) -> Json:
        """The thread as one bot sees it: with `member` when the bot is in it."""
        seen = obj.wire(thread)
        if bot_user_id in thread["_members"]:
            seen["member"] = obj.thread_member(thread["id"], bot_user_id)
        return seen

    # --- events ----------------------------------------------------------------------------------------------

    def dispatch(self, channel_id: str, name: str, data: Json, *, intent: int) -> None:
        """Send an event about a channel to the bots that see it, if they identified with `intent` (0: always)."""
        for token in self.audience(channel_id):
            self.gateway.dispatch(token, name, needs(intent, data) if intent else constant(data))

    def dispatch_message(self, name: str, message: Json) -> None:
        channel = self.channel(message["channel_id"])
        intent = obj.DIRECT_MESSAGES if channel["type"] == 1 else obj.GUILD_MESSAGES
        payload = obj.wire(message)
        if "guild_id" in message and name == "MESSAGE_CREATE":
            payload["member"] = obj.member_object(None, obj.now_iso())
        for token in self.audience(message["channel_id"]):
            bot = self.bots[token]

            def data_for(s: Session, bot: Bot = bot) -> Json | None:
                if not s.intents & intent:
                    return None
                visible = obj.sees_content(message, bot_user_id=bot.user_id,
                                           content_intent=bool(s.intents & obj.MESSAGE_CONTENT))
                return payload if visible else obj.as_seen_without_content(payload)
            self.gateway.dispatch(token, name, data_for)

    def dispatch_thread_create(self, thread: Json) -> None:
        for token in self.audience(thread["id"]):
            seen = self.thread_for(thread, self.bots[token].user_id) | {"newly_created": True}
            self.gateway.dispatch(token, "THREAD_CREATE", needs(obj.GUILDS, seen))

    # --- changes (from REST or from the test's people) -------------------------------------------------------

    def post_message(self, channel_id: str, author: Json, body: Json, *, mentions: list[Json] | None = None,
                     message_id: str | None = None, **extra: Any) -> Json:
        """Store a message (content, components, flags, embeds, message_reference) and dispatch MESSAGE_CREATE."""
        with self.lock:
            channel = self.channel(channel_id)
            message = obj.message_object(channel_id=channel_id, author=author, content=str(body.get("content") or ""),
                                         guild_id=channel.get("guild_id"), mentions=mentions,
                                         message_id=message_id, **extra)
            message["components"] = copy.deepcopy(body.get("components") or [])
            message["embeds"] = copy.deepcopy(body.get("embeds") or [])
            message["flags"] = int(body.get("flags") or 0)
            message["attachments"] = copy.deepcopy(body.get("attachments") or [])
            self._link_reference(message, body.get("message_reference"))
            if channel["type"] in obj.THREAD_TYPES:
                channel["message_count"] += 1
                channel["total_message_sent"] += 1
                message["position"] = channel["total_message_sent"] - 1
            channel["last_message_id"] = message["id"]
            self.messages.setdefault(channel_id, []).append(message)
            if not message["flags"] & obj.EPHEMERAL:
                self.dispatch_message("MESSAGE_CREATE", message)
            return message

    def _link_reference(self, message: Json, reference: Json | None) -> None:
        if not reference:
            return
        ref_channel = str(reference.get("channel_id") or message["channel_id"])
        ref: Json = {"message_id": str(reference["message_id"]), "channel_id": ref_channel, "type": 0}
        if message.get("guild_id"):
            ref["guild_id"] = message["guild_id"]
        message["message_reference"] = ref
        message["type"] = 19  # a reply
        try:
            message["referenced_message"] = obj.wire(self.message(ref_channel, ref["message_id"]))
        except ApiError:
            if reference.get("fail_if_not_exists", True):
                raise ApiError(400, 50035, "Invalid Form Body (message_reference: Unknown message)") from None
            message["referenced_message"] = None

    def edit_message(self, message: Json, body: Json) -> Json:
        with self.lock:
            ephemeral = int(message.get("flags") or 0) & obj.EPHEMERAL  # an edit cannot make it public
            for key in ("content", "components", "embeds", "flags", "attachments"):
                if key in body and body[key] is not None:
                    message[key] = copy.deepcopy(body[key])
            message["flags"] = int(message.get("flags") or 0) | ephemeral
            if "content" in body:  # a deferred response stops "thinking" once it has content
                message["flags"] = int(message.get("flags") or 0) & ~obj.LOADING
            message["edited_timestamp"] = obj.now_iso()
            message["_edits"].append(message["content"])
            if not message["flags"] & obj.EPHEMERAL:
                self.dispatch_message("MESSAGE_UPDATE", message)
            return message

    def delete_message(self, message: Json) -> None:
        with self.lock:
            self.messages[message["channel_id"]].remove(message)
            data = {"id": message["id"], "channel_id": message["channel_id"]}
            if "guild_id" in message:
                data["guild_id"] = message["guild_id"]
            channel = self.channel(message["channel_id"])
            intent = obj.DIRECT_MESSAGES if channel["type"] == 1 else obj.GUILD_MESSAGES
            self.dispatch(message["channel_id"], "MESSAGE_DELETE", data, intent=intent)

    def create_thread(self, parent_id: str, *, owner_id: str, name: str, auto_archive_duration: int = 1440,
                      thread_id: str | None = None, thread_type: int = 11, rest: bool = True) -> Json:
        """A public thread under a text or forum channel; dispatches THREAD_CREATE (with `member` to its owner)."""
        with self.lock:
            parent = self.channel(parent_id)
            if parent["type"] not in (0, 5, 15):
                raise ApiError(400, 50024, "Cannot execute action on this channel type")
            thread = obj.thread_object(thread_id=thread_id or obj.snowflake(), guild_id=parent["guild_id"],
                                       parent_id=parent_id, owner_id=owner_id, name=name[:100],
                                       auto_archive_duration=auto_archive_duration, thread_type=thread_type)
            thread["_members"] = {owner_id}
            self.channels[thread["id"]] = thread
            self.messages[thread["id"]] = []
            if rest:
                self.created_threads.append(thread["id"])
            self.dispatch_thread_create(thread)
            return thread

    def thread_from_message(self, message: Json, *, owner_id: str, name: str, auto_archive_duration: int) -> Json:
        """POST /channels/{cid}/messages/{mid}/threads: the thread takes the message's id, as on Discord."""
        with self.lock:
            if message["channel_id"] in self.no_threads:
                raise ApiError(403, 50013, "Missing Permissions")
            if message.get("thread"):
                raise ApiError(400, 160004, "A thread has already been created for this message")
            thread = self.create_thread(message["channel_id"], owner_id=owner_id, name=name,
                                        auto_archive_duration=auto_archive_duration, thread_id=message["id"])
            message["flags"] = int(message.get("flags") or 0) | obj.HAS_THREAD
            message["thread"] = obj.wire(thread)
            return thread

    def react(self, message: Json, user_id: str, emoji: str, *, removed: bool) -> None:
        """Record a reaction and dispatch MESSAGE_REACTION_ADD / _REMOVE (unicode emoji only)."""
        with self.lock:
            channel = self.channel(message["channel_id"])
            users: set[str] = message.setdefault("_reactions", {}).setdefault(emoji, set())
            (users.discard if removed else users.add)(user_id)
            message["reactions"] = [{"emoji": {"id": None, "name": e}, "count": len(u), "me": False,
                                     "count_details": {"burst": 0, "normal": len(u)}, "burst_colors": [],
                                     "me_burst": False, "burst_me": False}
                                    for e, u in message["_reactions"].items() if u]
            data: Json = {"user_id": user_id, "channel_id": message["channel_id"], "message_id": message["id"],
                          "emoji": {"id": None, "name": emoji}, "burst": False, "type": 0}
            if "guild_id" in channel:
                data["guild_id"] = channel["guild_id"]
                if not removed:
                    data["member"] = obj.member_object(self.users.get(user_id), obj.now_iso())
            if not removed:
                data["message_author_id"] = message["author"]["id"]
            intent = obj.DIRECT_MESSAGE_REACTIONS if channel["type"] == 1 else obj.GUILD_MESSAGE_REACTIONS
            name = "MESSAGE_REACTION_REMOVE" if removed else "MESSAGE_REACTION_ADD"
            self.dispatch(message["channel_id"], name, data, intent=intent)

    def dm_channel(self, token: str, user_id: str) -> Json:
        """The DM channel between a user and a bot (made on first use)."""
        with self.lock:
            for channel in self.channels.values():
                if channel["type"] == 1 and channel["_bot"] == token and channel["recipients"][0]["id"] == user_id:
                    return channel
            channel = obj.dm_channel_object(obj.snowflake(), self.user(user_id)) | {"_bot": token}
            self.channels[channel["id"]] = channel
            self.messages[channel["id"]] = []
            return channel
