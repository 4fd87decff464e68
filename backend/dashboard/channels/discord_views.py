"""The Discord card of the Integrations tab: bot token, servers (refresh), channel allow-list, disconnect."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.channels.discord_forms import DiscordChannelsForm, DiscordTokenForm
from backend.dashboard.channels.discord_selectors import env_token_available
from backend.dashboard.channels.selectors import guru_integrations
from backend.dashboard.channels.slack_views import integrations_page, site_url
from backend.gurus.models import Guru
from backend.integrations.discord_setup import (
    discord_channels_set,
    discord_connect,
    discord_connected,
    discord_disconnect,
    discord_refresh,
)
from backend.integrations.models import Integration, IntegrationKind
from backend.integrations.services import SetupError


def _tab(guru: Guru) -> str:
    return reverse("dashboard:integrations", args=[guru.slug]) + "#discord"


def _sentence(text: str) -> str:
    return text if text.endswith(".") else f"{text}."


def _servers(count: int) -> str:
    return f"{count} server{'s' if count != 1 else ''}"


@guru_view
@never_cache
@require_POST
def discord_connect_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    """The token is checked with Discord (the bot user, its application, its servers) before anything is kept."""
    form = DiscordTokenForm(request.POST, env_available=env_token_available(guru))
    if not form.is_valid():
        return integrations_page(request, guru, discord_form=form)
    data = form.cleaned_data
    try:
        connection = discord_connect(guru=guru, token=data.get("token", ""), use_env=bool(data.get("use_env")),
                                     site_url=site_url(request))
    except SetupError as exc:
        form.add_error(None, exc.msg)
        return integrations_page(request, guru, discord_form=form)
    integration = connection.integration
    if not connection.message_content:
        messages.warning(request, "The Message Content intent is off for this application: turn it on in the "
                                  "Developer Portal (Bot → Privileged Gateway Intents), or Discord refuses the bot's "
                                  "connection.")
    where = (f"it is in {_servers(len(integration.guilds))}: choose its channels below" if integration.guilds
             else "it is in no server yet: add it with the invite link below")
    messages.success(request, f"Connected the Discord bot “{integration.workspace_name}”; {where}.")
    return redirect(_tab(guru))


def _with_connection(change: Callable[[AuthenticatedHttpRequest, Integration], str]) -> Callable[..., HttpResponseBase]:
    """A POST on the connected bot: `change` returns the success message or raises SetupError; back to the tab."""

    @guru_view
    @require_POST
    @wraps(change)
    def view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
        found = guru_integrations(guru=guru)[IntegrationKind.DISCORD]
        if found is None or not discord_connected(found):
            messages.error(request, "Discord is not connected: connect it first.")
        else:
            try:
                messages.success(request, change(request, found))
            except SetupError as exc:
                messages.error(request, f"{_sentence(exc.msg)} Nothing was saved.")
        return redirect(_tab(guru))

    return view


@_with_connection
def discord_refresh_view(request: AuthenticatedHttpRequest, integration: Integration) -> str:
    """Read the bot's servers again, e.g. after adding it to one with the invite link."""
    listing = discord_refresh(integration=integration)
    names = ", ".join(f"“{g.name}”" for g in listing.guilds[:10])
    return f"The bot is in {_servers(len(listing.guilds))}{f': {names}' if names else ''}."


@_with_connection
def discord_channels_view(request: AuthenticatedHttpRequest, integration: Integration) -> str:
    form = DiscordChannelsForm(request.POST)
    form.is_valid()  # one optional checkbox: always valid
    discord_channels_set(integration=integration, channels=form.channels(),
                         allow_dm=bool(form.cleaned_data.get("allow_dm")))
    count = len(integration.channels)
    return (f"Saved: the bot answers in {count} channel{'s' if count != 1 else ''} (and their threads)"
            f"{' and in direct messages' if integration.allow_dm else ''}.")


@guru_view
@require_POST
def discord_disconnect_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    integration = guru_integrations(guru=guru)[IntegrationKind.DISCORD]
    if integration is not None:
        name = integration.workspace_name or integration.external_id
        discord_disconnect(integration=integration)
        messages.success(request, f"Disconnected the Discord bot{f' “{name}”' if name else ''}: its token was "
                                  "forgotten here and it stops answering. Reset the token in the Developer Portal "
                                  "if it may have leaked.")
    return redirect(_tab(guru))
