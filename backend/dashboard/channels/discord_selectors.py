"""Read paths of the Discord card: the invite link, the bot's servers and their channels, grouped for the form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from backend.dashboard.channels.discord_forms import MODE_LABELS, OFF, DiscordChannelsForm, DiscordTokenForm
from backend.gurus.models import Guru
from backend.integrations.discord_setup import (
    DiscordListing,
    bot_shared_with,
    discord_connected,
    discord_refresh,
    env_token_holder,
)
from backend.integrations.models import Integration
from backend.integrations.services import MODES, SetupError

PERMISSION_NAMES = ("View Channels", "Send Messages", "Create Public Threads", "Send Messages in Threads",
                    "Read Message History")


@dataclass(frozen=True)
class ChannelRow:
    id: str
    name: str
    kind: str  # "text" or "forum"
    category: str
    mode: str  # "off", "mention" or "auto"
    listed: bool  # Discord lists it now (False: saved earlier; deleted since, the bot left, or Discord is down)


@dataclass(frozen=True)
class GuildGroup:
    id: str
    name: str
    rows: list[ChannelRow]


def env_token_available(guru: Guru) -> bool:
    """The operator set DISCORD_BOT_TOKEN and no other guru uses it."""
    return bool(settings.DISCORD_BOT_TOKEN) and env_token_holder(exclude=guru) is None


def _saved(integration: Integration) -> dict[str, dict[str, str]]:
    entries = integration.channels if isinstance(integration.channels, list) else []
    return {str(e.get("id")): e for e in entries if isinstance(e, dict) and e.get("id")}


def _mode(entry: dict[str, str] | None) -> str:
    mode = (entry or {}).get("mode", OFF)
    return mode if mode in MODES else OFF


def _groups(integration: Integration, listing: DiscordListing | None) -> list[GuildGroup]:
    """Each server's listed channels, then the saved channels Discord does not list now, under their server."""
    saved = _saved(integration)
    known = {str(g.get("id")): str(g.get("name", "")) for g in integration.guilds if isinstance(g, dict)}
    guilds = [(g.id, g.name) for g in listing.guilds] if listing else list(known.items())
    listed = {c.id for channels in (listing.channels.values() if listing else []) for c in channels}
    groups: dict[str, GuildGroup] = {}
    for guild_id, name in guilds:
        rows = [ChannelRow(c.id, c.name, c.kind, c.category, _mode(saved.get(c.id)), listed=True)
                for c in (listing.channels.get(guild_id, []) if listing else [])]
        groups[guild_id] = GuildGroup(guild_id, name, rows)
    for channel_id, entry in saved.items():
        if channel_id in listed:
            continue
        guild_id = str(entry.get("guild_id", ""))
        group = groups.setdefault(guild_id, GuildGroup(guild_id, known.get(guild_id, ""), []))
        group.rows.append(ChannelRow(channel_id, str(entry.get("name", "")), str(entry.get("kind", "text")), "",
                                     _mode(entry), listed=False))
    return list(groups.values())


def discord_channel_groups(integration: Integration) -> tuple[list[GuildGroup], str]:
    """The bot's servers with their channels as Discord lists them now; the saved ones and the error if it cannot."""
    try:
        listing: DiscordListing | None = discord_refresh(integration=integration)
    except SetupError as exc:
        listing = None
        error = f"{exc.msg}; the saved servers and channels are shown."
    else:
        error = ""
    return _groups(integration, listing), error


def discord_card(guru: Guru, discord: Integration | None, *,
                 token_form: DiscordTokenForm | None = None) -> dict[str, Any]:
    """The template context of the Discord card, connected or not."""
    connected = discord_connected(discord)
    context: dict[str, Any] = {"discord": discord, "discord_connected": connected}
    if not connected or discord is None:
        env = env_token_available(guru)
        context.update(discord_env_available=env,
                       discord_form=token_form or DiscordTokenForm(env_available=env))
        return context
    # Imported here: discord.py costs every process that loads the URLs 0.3 s at start (see discord_setup.py).
    from backend.adapters.discord.rest import BOT_PERMISSIONS, invite_url

    groups, error = discord_channel_groups(discord)
    context.update(discord_groups=groups, discord_channels_error=error, discord_mode_labels=MODE_LABELS,
                   discord_invite_url=invite_url(discord.app_id), discord_shared_with=bot_shared_with(discord),
                   discord_permissions=PERMISSION_NAMES, discord_permissions_value=BOT_PERMISSIONS.value,
                   discord_channels_form=DiscordChannelsForm(initial={"allow_dm": discord.allow_dm}))
    return context
