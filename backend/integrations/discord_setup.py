"""Connecting a guru to its Discord bot: the token checked with Discord, the servers and channel allow-list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings

from backend.adapters.discord.types import DiscordChannel, DiscordError, Guild
from backend.gurus.models import Guru
from backend.integrations.models import Integration, IntegrationKind
from backend.integrations.services import MAX_CHANNELS, MODES, SetupError

if TYPE_CHECKING:
    from backend.adapters.discord.rest import DiscordRest

MAX_TOKEN = 200  # Discord's bot tokens are about 70 characters
MAX_LISTED_GUILDS = 50  # servers whose channels the setup lists (each is one request to Discord)


def bot_shared_with(integration: Integration) -> list[str]:
    """The other gurus one bot answers for (the listener serves them all over one connection, by channel)."""
    others = Integration.objects.filter(kind=IntegrationKind.DISCORD, external_id=integration.external_id).exclude(
        pk=integration.pk).select_related("guru").order_by("guru__name")
    return [other.guru.name for other in others]


def discord_rest(token: str) -> DiscordRest:
    """The adapter at the configured REST base (Discord, a compatible proxy, or a test fake)."""
    # Imported here: discord.py and aiohttp cost every process that loads the URLs 0.3 s at start.
    from backend.adapters.discord.rest import DiscordRest

    return DiscordRest(token, base_url=settings.OPENGURU_DISCORD_API_URL)


def discord_token(integration: Integration) -> str:
    """The token the bot uses: the operator's DISCORD_BOT_TOKEN, or the one pasted on the dashboard."""
    return str(settings.DISCORD_BOT_TOKEN or "") if integration.token_from_env else integration.access_token


def discord_connected(integration: Integration | None) -> bool:
    return bool(integration is not None and (integration.access_token or integration.token_from_env))


def env_token_holder(*, exclude: Guru | None = None) -> Integration | None:
    """The integration that uses DISCORD_BOT_TOKEN (one guru at most), other than `exclude`'s."""
    found = Integration.objects.filter(kind=IntegrationKind.DISCORD, token_from_env=True).select_related("guru")
    return (found.exclude(guru=exclude) if exclude is not None else found).first()


def _checked(token: str) -> str:
    token = token.strip().removeprefix("Bot ").strip()  # the header form is pasted sometimes
    if not 20 <= len(token) <= MAX_TOKEN or not token.isascii() or any(c.isspace() for c in token):
        raise SetupError("Paste the bot token: Developer Portal → your application → Bot → Reset Token, then Copy.",
                         "discord_setup")
    return token


def _token_to_use(guru: Guru, token: str, use_env: bool) -> str:
    if not use_env:
        return _checked(token)
    if not settings.DISCORD_BOT_TOKEN:
        raise SetupError("DISCORD_BOT_TOKEN is not set on this instance: paste the bot token instead.",
                         "discord_setup")
    holder = env_token_holder(exclude=guru)
    if holder is not None:
        raise SetupError(f"DISCORD_BOT_TOKEN is already used by the guru “{holder.guru.name}”: paste another "
                         "bot's token here.", "discord_setup")
    return str(settings.DISCORD_BOT_TOKEN)


def _refused(exc: DiscordError, use_env: bool) -> SetupError:
    if exc.code == "invalid_token" and use_env:
        why = "Discord did not accept DISCORD_BOT_TOKEN (401): the operator must set it to a valid bot token."
    elif exc.code == "invalid_token":
        why = "Discord did not accept the token (401): copy it again from the Bot page (Reset Token)."
    elif exc.code == "connection_failed":
        why = "Discord could not be reached from this instance: nothing was saved; try again later."
    else:
        why = f"Discord refused the check ({exc.code}): nothing was saved."
    return SetupError(why, "discord_setup")


def _guild_rows(guilds: list[Guild]) -> list[dict[str, str]]:
    return [{"id": g.id, "name": g.name[:100]} for g in guilds]


@dataclass(frozen=True)
class DiscordConnection:
    integration: Integration
    message_content: bool  # False: the Message Content intent is off in the Developer Portal (say so)


def discord_connect(*, guru: Guru, token: str, use_env: bool, site_url: str) -> DiscordConnection:
    """Check the bot token with Discord (the bot, its application, its servers), then save the integration."""
    token = _token_to_use(guru, token, use_env)
    rest = discord_rest(token)
    try:
        identity = rest.identity()
        guilds = rest.guilds()
    except DiscordError as exc:
        raise _refused(exc, use_env) from exc
    integration = Integration.objects.filter(guru=guru, kind=IntegrationKind.DISCORD).first() or Integration(
        guru=guru, kind=IntegrationKind.DISCORD)
    if integration.external_id != identity.application_id:
        integration.channels = []  # another bot: the channels it was allowed in belong to the old one's servers
    integration.access_token, integration.token_from_env = ("" if use_env else token), use_env
    integration.app_id = integration.external_id = identity.application_id
    integration.bot_user_id, integration.workspace_name = identity.user_id, identity.name[:200]
    integration.guilds, integration.site_url = _guild_rows(guilds), site_url
    integration.last_error, integration.last_error_at = "", None
    integration.save()
    return DiscordConnection(integration=integration, message_content=identity.message_content)


@dataclass(frozen=True)
class DiscordListing:
    """What Discord says now: the bot's servers and, for each, its text and forum channels."""

    guilds: list[Guild]
    channels: dict[str, list[DiscordChannel]] = field(default_factory=dict)  # guild id -> channels


def discord_refresh(*, integration: Integration) -> DiscordListing:
    """Ask Discord for the bot's servers and their channels; keep the server list when it changed."""
    token = discord_token(integration)
    if not token:
        raise SetupError("DISCORD_BOT_TOKEN is no longer set on this instance: set it again, or paste a token.",
                         "discord_token")
    try:
        servers = discord_rest(token).servers(max_guilds=MAX_LISTED_GUILDS)
    except DiscordError as exc:
        reason = "Discord could not be reached" if exc.code == "connection_failed" else (
            f"Discord did not list the bot's servers ({exc.code})")
        raise SetupError(reason, f"discord_{exc.code}") from exc
    guilds = [guild for guild, _ in servers]
    rows = _guild_rows(guilds)
    if rows != integration.guilds:  # a cache of what Discord says, written only when it changed
        integration.guilds = rows
        integration.save(update_fields=["guilds", "updated_at"])
    return DiscordListing(guilds=guilds, channels={guild.id: channels for guild, channels in servers})


def _known(integration: Integration) -> dict[str, dict[str, str]]:
    """The channels the bot may be allowed in: those Discord lists now, and those saved before (to keep or untick)."""
    saved = integration.channels if isinstance(integration.channels, list) else []
    known = {str(e["id"]): e for e in saved if isinstance(e, dict) and e.get("id")}
    listing = discord_refresh(integration=integration)
    for guild_id, listed in listing.channels.items():
        known.update({c.id: {"id": c.id, "name": c.name, "guild_id": guild_id, "kind": c.kind} for c in listed})
    return known


def discord_channels_set(*, integration: Integration, channels: list[dict[str, str]],
                         allow_dm: bool) -> Integration:
    """Replace the allow-list with [{"id", "mode"}]: only channels of the bot's servers, mode "mention" or "auto"."""
    if len(channels) > MAX_CHANNELS:
        raise SetupError(f"At most {MAX_CHANNELS} channels.", "discord_setup")
    wanted = [(str(e.get("id", "")).strip(), str(e.get("mode", MODES[0]))) for e in channels]
    for channel_id, mode in wanted:
        if not (channel_id.isdigit() and len(channel_id) <= 25) or mode not in MODES:
            raise SetupError(f"Not a channel id or mode: {channel_id[:30]!r} {mode[:20]!r}.", "discord_setup")
    known = _known(integration)  # SetupError when Discord cannot list them: nothing is saved then
    unknown = [channel_id for channel_id, _ in wanted if channel_id not in known]
    if unknown:
        raise SetupError(f"Not a channel of the bot's servers: {', '.join(unknown[:5])}.", "discord_setup")
    clean, seen = [], set()
    for channel_id, mode in wanted:
        if channel_id not in seen:
            seen.add(channel_id)
            entry = known[channel_id]
            clean.append({"id": channel_id, "name": str(entry.get("name", ""))[:100], "mode": mode,
                          "guild_id": str(entry.get("guild_id", "")), "kind": str(entry.get("kind", "text"))})
    integration.channels, integration.allow_dm = clean, allow_dm
    integration.save(update_fields=["channels", "allow_dm", "updated_at"])
    return integration


def discord_disconnect(*, integration: Integration) -> None:
    """Forget the integration and its token: the listener drops the bot's connection at its next rescan.

    Discord has no call that revokes a bot token; the maintainer resets it in the Developer Portal if it leaked.
    """
    integration.delete()
