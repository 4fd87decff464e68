"""Discord API object payloads (users, members, guilds, channels, threads, messages) in the shapes discord.py parses."""

from __future__ import annotations

import copy
import datetime
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]

DISCORD_EPOCH_MS = 1420070400000
# Gateway intents (https://discord.com/developers/docs/events/gateway#gateway-intents).
GUILDS, GUILD_MEMBERS, GUILD_PRESENCES = 1 << 0, 1 << 1, 1 << 8
GUILD_MESSAGES, GUILD_MESSAGE_REACTIONS, DIRECT_MESSAGES, DIRECT_MESSAGE_REACTIONS = 1 << 9, 1 << 10, 1 << 12, 1 << 13
MESSAGE_CONTENT = 1 << 15
# Application flags telling discord.py (and the dashboard) the message-content intent is enabled for the app.
GATEWAY_MESSAGE_CONTENT = 1 << 19
# What @everyone may do in the fake guilds: view, send, embed, attach, history, react, use commands, make threads,
# send in threads, manage threads (enough for a bot that answers in threads; the dashboard's invite asks for these).
EVERYONE_PERMISSIONS = ((1 << 6) | (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 31)
                        | (1 << 34) | (1 << 35) | (1 << 38))
THREAD_TYPES = {10, 11, 12}
EPHEMERAL, LOADING, HAS_THREAD = 1 << 6, 1 << 7, 1 << 5

_counter = itertools.count(1)
_counter_lock = threading.Lock()


def snowflake() -> str:
    """A fresh, increasing id with a real timestamp in its top bits (discord.py derives created_at from it)."""
    with _counter_lock:
        increment = next(_counter) & 0xFFF
    return str(((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (1 << 17) | increment)


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


@dataclass
class Bot:
    token: str
    user_id: str
    name: str
    application_id: str
    message_content: bool = True

    def user(self) -> Json:
        return user_object(self.user_id, self.name, bot=True)


@dataclass
class Guild:
    id: str
    name: str
    bots: list[str]                      # tokens of the bots in it
    channel_ids: list[str] = field(default_factory=list)
    joined_at: str = field(default_factory=now_iso)


def user_object(user_id: str, name: str, *, bot: bool = False) -> Json:
    user: Json = {"id": user_id, "username": name, "global_name": name, "discriminator": "0", "avatar": None,
                  "public_flags": 0}
    if bot:
        user["bot"] = True
    return user


def member_object(user: Json | None, joined_at: str, *, permissions: bool = False) -> Json:
    """A guild member; without `user` it is the partial member a MESSAGE_CREATE carries next to `author`."""
    member: Json = {"roles": [], "joined_at": joined_at, "deaf": False, "mute": False, "flags": 0, "pending": False,
                    "nick": None, "premium_since": None}
    if user is not None:
        member["user"] = user
    if permissions:
        member["permissions"] = str(EVERYONE_PERMISSIONS)
    return member


def channel_object(spec: Json, guild_id: str, position: int) -> Json:
    """A guild channel from the test's spec {"id","name","type","parent_id"?,"topic"?}."""
    channel: Json = {"id": str(spec["id"]), "guild_id": guild_id, "name": spec["name"], "type": int(spec["type"]),
                     "position": int(spec.get("position", position)), "parent_id": spec.get("parent_id"),
                     "permission_overwrites": [], "nsfw": False, "topic": spec.get("topic"), "flags": 0,
                     "rate_limit_per_user": 0, "last_message_id": None}
    if channel["type"] == 15:
        channel |= {"available_tags": [], "default_reaction_emoji": None, "default_sort_order": None,
                    "default_forum_layout": 0, "default_thread_rate_limit_per_user": 0}
    return channel


def thread_object(*, thread_id: str, guild_id: str, parent_id: str, owner_id: str, name: str,
                  auto_archive_duration: int = 1440, thread_type: int = 11) -> Json:
    created = now_iso()
    return {"id": thread_id, "guild_id": guild_id, "parent_id": parent_id, "owner_id": owner_id, "name": name,
            "type": thread_type, "last_message_id": None, "message_count": 0, "member_count": 1,
            "total_message_sent": 0, "rate_limit_per_user": 0, "flags": 0, "applied_tags": [],
            "thread_metadata": {"archived": False, "auto_archive_duration": auto_archive_duration,
                                "archive_timestamp": created, "locked": False, "create_timestamp": created}}


def thread_member(thread_id: str, user_id: str) -> Json:
    return {"id": thread_id, "user_id": user_id, "join_timestamp": now_iso(), "flags": 0}


def dm_channel_object(channel_id: str, recipient: Json) -> Json:
    return {"id": channel_id, "type": 1, "recipients": [recipient], "last_message_id": None, "flags": 0}


def guild_object(guild: Guild, *, owner_id: str) -> Json:
    """The guild as GET /guilds/{id} answers (no channels, members or threads)."""
    everyone = {"id": guild.id, "name": "@everyone", "permissions": str(EVERYONE_PERMISSIONS), "position": 0,
                "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
    return {"id": guild.id, "name": guild.name, "icon": None, "splash": None, "discovery_splash": None,
            "owner_id": owner_id, "afk_channel_id": None, "afk_timeout": 300, "verification_level": 0,
            "default_message_notifications": 0, "explicit_content_filter": 0, "roles": [everyone], "emojis": [],
            "stickers": [], "features": [], "mfa_level": 0, "system_channel_id": None, "system_channel_flags": 0,
            "rules_channel_id": None, "vanity_url_code": None, "description": None, "banner": None,
            "premium_tier": 0, "premium_subscription_count": 0, "preferred_locale": "en-US",
            "public_updates_channel_id": None, "nsfw_level": 0, "premium_progress_bar_enabled": False}


def message_object(*, channel_id: str, author: Json, content: str, guild_id: str | None,
                   mentions: list[Json] | None = None, message_id: str | None = None, **extra: Any) -> Json:
    """A message as Discord stores it; `_edits` (our record of each PATCH) never goes over the wire."""
    message: Json = {"id": message_id or snowflake(), "channel_id": channel_id, "author": author,
                     "content": content, "timestamp": now_iso(), "edited_timestamp": None, "tts": False,
                     "mention_everyone": False, "mentions": list(mentions or []), "mention_roles": [],
                     "attachments": [], "embeds": [], "reactions": [], "pinned": False, "type": 0, "flags": 0,
                     "components": [], "_edits": []}
    if guild_id is not None:
        message["guild_id"] = guild_id
    message.update(extra)
    return message


def wire(obj: Json) -> Json:
    """A deep copy without our bookkeeping keys (those starting with `_`)."""
    return {k: copy.deepcopy(v) for k, v in obj.items() if not k.startswith("_")}


def mentions_user(message: Json, user_id: str) -> bool:
    return any(m.get("id") == user_id for m in message.get("mentions", []))


def as_seen_without_content(message: Json) -> Json:
    """What an app without the message-content intent gets: content, embeds, attachments, components, poll
    emptied (https://support-dev.discord.com/hc/en-us/articles/4404772028055)."""
    stripped = dict(message, content="", embeds=[], attachments=[], components=[])
    stripped.pop("poll", None)
    return stripped


def sees_content(message: Json, *, bot_user_id: str, content_intent: bool) -> bool:
    """Discord shows content to an app with the intent, and without it in DMs, mentions and its own messages."""
    if content_intent or message.get("author", {}).get("id") == bot_user_id:
        return True
    return "guild_id" not in message or mentions_user(message, bot_user_id)


def application_object(bot: Bot) -> Json:
    """GET /oauth2/applications/@me."""
    return {"id": bot.application_id, "name": bot.name, "description": "", "icon": None, "bot_public": True,
            "bot_require_code_grant": False, "owner": user_object("1000000000000000001", "owner"),
            "verify_key": "0" * 64, "flags": GATEWAY_MESSAGE_CONTENT if bot.message_content else 0,
            "summary": "", "team": None, "bot": bot.user(), "redirect_uris": [], "interactions_endpoint_url": None,
            "approximate_guild_count": 0, "tags": [], "install_params": None}
