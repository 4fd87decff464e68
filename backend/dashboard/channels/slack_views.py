"""The Integrations tab and its Slack card: manifest, tokens or OAuth install, allow-list (Discord: discord_views)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from backend.dashboard.access import AuthenticatedHttpRequest, guru_view, maintained_guru
from backend.dashboard.channels.discord_forms import DiscordTokenForm
from backend.dashboard.channels.discord_selectors import discord_card
from backend.dashboard.channels.selectors import guru_integrations
from backend.dashboard.channels.slack_forms import (
    MODE_LABELS,
    SlackChannelsForm,
    SlackOAuthForm,
    SlackTokensForm,
    chosen_transport,
)
from backend.dashboard.channels.slack_selectors import app_manifest, slack_channel_rows, slack_connected
from backend.gurus.models import Guru
from backend.integrations.models import Integration, IntegrationKind
from backend.integrations.services import (
    PastedTokens,
    SetupError,
    slack_channels_set,
    slack_connect,
    slack_disconnect,
    slack_oauth_begin,
    slack_oauth_finish,
)

# The OAuth install in progress in this browser session: the nonce its `state` carries, and the guru's slug.
SESSION_NONCE = "slack_oauth_nonce"
SESSION_GURU = "slack_oauth_guru"


def site_url(request: HttpRequest) -> str:
    """The instance's address as the maintainer reached it: the bot's links and the manifest's URLs start here."""
    return request.build_absolute_uri("/")


def _oauth_redirect(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("dashboard:slack-oauth-callback"))


def _tab(guru: Guru) -> str:
    return reverse("dashboard:integrations", args=[guru.slug]) + "#slack"


def _slack_context(request: HttpRequest, guru: Guru, slack: Integration | None, transport: str) -> dict[str, Any]:
    if slack_connected(slack):
        assert slack is not None
        rows, channels_error = slack_channel_rows(slack)
        return {"slack_rows": rows, "slack_channels_error": channels_error, "mode_labels": MODE_LABELS,
                "channels_form": SlackChannelsForm(initial={"allow_dm": slack.allow_dm})}
    return {"manifest": app_manifest(guru_name=guru.name, site_url=site_url(request), transport=transport,
                                     oauth_redirect=_oauth_redirect(request)),
            "oauth_redirect": _oauth_redirect(request)}


def integrations_page(request: HttpRequest, guru: Guru, *, tokens_form: SlackTokensForm | None = None,
                      oauth_form: SlackOAuthForm | None = None,
                      discord_form: DiscordTokenForm | None = None) -> HttpResponse:
    """The whole tab (Slack and Discord cards), with a bound form when one of them came back with errors."""
    found = guru_integrations(guru=guru)
    slack = found[IntegrationKind.SLACK]
    transport = tokens_form.transport if tokens_form else chosen_transport(request.GET.get("transport"))
    context: dict[str, Any] = {
        "guru": guru, "slack": slack, "slack_connected": slack_connected(slack),
        "base": site_url(request).rstrip("/"), "transport": transport,
        "tokens_form": tokens_form or SlackTokensForm(transport=transport),
        "oauth_form": oauth_form or SlackOAuthForm(), **_slack_context(request, guru, slack, transport),
        **discord_card(guru, found[IntegrationKind.DISCORD], token_form=discord_form)}
    return render(request, "dashboard/channels/integrations.html", context)


@guru_view
@require_GET
def integrations(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    return integrations_page(request, guru)


@guru_view
@never_cache
@require_POST
def slack_connect_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    """Pasted tokens for one workspace: Slack checks them (auth.test, and apps.connections.open for Socket Mode)."""
    form = SlackTokensForm(request.POST, transport=chosen_transport(request.POST.get("transport")))
    if not form.is_valid():
        return integrations_page(request, guru, tokens_form=form)
    data = form.cleaned_data
    tokens = PastedTokens(bot_token=data["bot_token"], transport=form.transport,
                          signing_secret=data.get("signing_secret", ""), app_token=data.get("app_token", ""))
    try:
        integration = slack_connect(guru=guru, tokens=tokens, site_url=site_url(request))
    except SetupError as exc:
        form.add_error(None, exc.msg)
        return integrations_page(request, guru, tokens_form=form)
    messages.success(request, f"Connected to the Slack workspace “{integration.workspace_name}”. Invite the bot to "
                              "a channel, then tick that channel below.")
    return redirect(_tab(guru))


@guru_view
@never_cache
@require_POST
def slack_oauth_start(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    """Keep the app's credentials, remember the install in this session, and send the maintainer to Slack."""
    form = SlackOAuthForm(request.POST)
    if not form.is_valid():
        return integrations_page(request, guru, oauth_form=form)
    try:
        authorize_url, nonce = slack_oauth_begin(guru=guru, redirect_uri=_oauth_redirect(request),
                                                 site_url=site_url(request), **form.cleaned_data)
    except SetupError as exc:
        form.add_error(None, exc.msg)
        return integrations_page(request, guru, oauth_form=form)
    request.session[SESSION_NONCE], request.session[SESSION_GURU] = nonce, guru.slug
    return redirect(authorize_url)


@login_required
@never_cache
@require_GET
def slack_oauth_callback(request: HttpRequest) -> HttpResponse:
    """Slack sends the maintainer back here: the signed state is spent once, with this session's nonce."""
    nonce, slug = request.session.pop(SESSION_NONCE, ""), request.session.pop(SESSION_GURU, "")
    if not slug:
        messages.error(request, "No Slack install was started in this browser session: start it from a guru's "
                                "Integrations tab.")
        return redirect("dashboard:home")
    guru = maintained_guru(request, slug)  # 404 when the user no longer maintains it
    if error := request.GET.get("error"):
        why = "you cancelled it" if error == "access_denied" else f"Slack said “{error[:100]}”"
        messages.error(request, f"The app was not installed: {why}. Nothing was changed.")
        return redirect(_tab(guru))
    try:
        integration = slack_oauth_finish(state=request.GET.get("state", ""), code=request.GET.get("code", ""),
                                         redirect_uri=_oauth_redirect(request), session_nonce=str(nonce))
    except SetupError as exc:
        messages.error(request, exc.msg)
        return redirect(_tab(guru))
    messages.success(request, f"Installed in the Slack workspace “{integration.workspace_name}”. Invite the bot "
                              "to a channel, then tick that channel below.")
    return redirect(_tab(integration.guru))


def _slack_of(guru: Guru) -> Integration | None:
    found = guru_integrations(guru=guru)[IntegrationKind.SLACK]
    return found if slack_connected(found) else None


@guru_view
@require_POST
def slack_channels_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    integration = _slack_of(guru)
    if integration is None:
        messages.error(request, "Slack is not connected: connect it first.")
        return redirect(_tab(guru))
    form = SlackChannelsForm(request.POST)
    form.is_valid()  # one optional checkbox: always valid
    try:
        slack_channels_set(integration=integration, channels=form.channels(),
                           allow_dm=bool(form.cleaned_data.get("allow_dm")))
    except SetupError as exc:
        messages.error(request, exc.msg)
        return redirect(_tab(guru))
    count = len(integration.channels)
    messages.success(request, f"Saved: the bot answers in {count} channel{'s' if count != 1 else ''}"
                              f"{' and in direct messages' if integration.allow_dm else ''}.")
    return redirect(_tab(guru))


@guru_view
@require_POST
def slack_disconnect_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    integration = guru_integrations(guru=guru)[IntegrationKind.SLACK]
    if integration is not None:
        name = integration.workspace_name or integration.external_id
        slack_disconnect(integration=integration)
        messages.success(request, f"Disconnected from Slack{f' ({name})' if name else ''}: the bot token was "
                                  "revoked and forgotten. Delete the app at api.slack.com if you no longer need it.")
    return redirect(_tab(guru))
