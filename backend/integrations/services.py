"""Connecting a guru to Slack: pasted tokens or OAuth install (signed, single-use state), allow-list, health."""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone
from slack_sdk.oauth import AuthorizeUrlGenerator

from backend.adapters.slack.web import SlackError, SlackWeb
from backend.core.errors import RequestError
from backend.gurus.models import Guru
from backend.integrations.models import Integration, IntegrationKind, OAuthState, Transport

BOT_SCOPES = ("app_mentions:read", "channels:history", "channels:read", "chat:write", "groups:history",
              "groups:read", "im:history", "im:read", "reactions:read", "team:read")
STATE_SALT = "openguru.slack.oauth-state"
STATE_MAX_AGE_S = 600  # an install not finished within 10 minutes starts again
MODES = ("mention", "auto")  # answer when @mentioned / answer every top-level message
MAX_CHANNELS = 200


class SetupError(RequestError):
    """A setup step the maintainer must redo: the message says what to fix."""

    def __init__(self, msg: str, code: str = "slack_setup") -> None:
        super().__init__(400, code, msg)


def slack_web(token: str) -> SlackWeb:
    return SlackWeb(token, base_url=settings.OPENGURU_SLACK_API_URL)


def _checked(token: str, prefix: str, label: str) -> str:
    token = token.strip()
    if not token.startswith(prefix) or len(token) > 300 or any(c.isspace() for c in token):
        raise SetupError(f"The {label} starts with “{prefix}” (copy it from your Slack app's settings).")
    return token


def _secret(value: str, label: str) -> str:
    value = value.strip()
    if not 8 <= len(value) <= 200 or any(c.isspace() for c in value):
        raise SetupError(f"Paste the app's {label} (Basic Information → App Credentials).")
    return value


def _integration(guru: Guru) -> Integration:
    found = Integration.objects.filter(guru=guru, kind=IntegrationKind.SLACK).first()
    return found or Integration(guru=guru, kind=IntegrationKind.SLACK)


@dataclass(frozen=True)
class PastedTokens:
    bot_token: str
    transport: str
    signing_secret: str = ""
    app_token: str = ""


def slack_connect(*, guru: Guru, tokens: PastedTokens, site_url: str) -> Integration:
    """Single workspace: check the bot token (and the app-level token for Socket Mode) with Slack, then save."""
    bot_token = _checked(tokens.bot_token, "xoxb-", "bot token")
    socket = tokens.transport == Transport.SOCKET
    app_token = _checked(tokens.app_token, "xapp-", "app-level token") if socket else ""
    signing_secret = "" if socket else _secret(tokens.signing_secret, "signing secret")
    web = slack_web(bot_token)
    try:
        identity = web.identity()
        if socket:
            web.app_connection_url(app_token)
    except SlackError as exc:
        raise SetupError(f"Slack did not accept the token: {exc.code}.") from exc
    integration = _integration(guru)
    integration.transport, integration.access_token, integration.app_token = tokens.transport, bot_token, app_token
    integration.signing_secret = signing_secret or integration.signing_secret
    integration.external_id, integration.workspace_name = identity.team_id, identity.team_name
    integration.bot_user_id, integration.site_url = identity.bot_user_id, site_url
    integration.last_error, integration.last_error_at = "", None
    integration.save()
    return integration


def _state(guru: Guru) -> tuple[str, str]:
    nonce = secrets.token_urlsafe(24)
    OAuthState.objects.filter(created_at__lt=timezone.now() - timedelta(days=1)).delete()
    OAuthState.objects.create(nonce=nonce, guru=guru)
    return nonce, signing.dumps({"n": nonce, "g": guru.pk}, salt=STATE_SALT)


def slack_oauth_begin(*, guru: Guru, client_id: str, client_secret: str, signing_secret: str, redirect_uri: str,
                      site_url: str) -> tuple[str, str]:
    """Keep the app's credentials and return (Slack's authorize URL, the nonce the browser session must hold)."""
    client_id = client_id.strip()
    if not (client_id.replace(".", "").isdigit() and 0 < len(client_id) <= 100):
        raise SetupError("The client id is two numbers joined by a dot (Basic Information → App Credentials).")
    integration = _integration(guru)
    if integration.access_token:  # a working connection is not rewritten by an install that may never finish
        raise SetupError("This guru is already connected to Slack: disconnect it first.", "slack_connected")
    integration.client_id, integration.client_secret = client_id, _secret(client_secret, "client secret")
    integration.signing_secret = _secret(signing_secret, "signing secret")
    integration.transport = Transport.EVENTS
    integration.site_url = site_url
    integration.save()
    nonce, state = _state(guru)
    generator = AuthorizeUrlGenerator(client_id=client_id, scopes=list(BOT_SCOPES), redirect_uri=redirect_uri,
                                      authorization_url=settings.OPENGURU_SLACK_AUTHORIZE_URL)
    return generator.generate(state), nonce


def _spend_state(state: str, session_nonce: str) -> Guru:
    try:
        data = signing.loads(state, salt=STATE_SALT, max_age=STATE_MAX_AGE_S)
    except signing.BadSignature as exc:  # SignatureExpired is one too
        raise SetupError("This install link is invalid or expired: start again from the Integrations tab.",
                         "slack_oauth_state") from exc
    nonce = str(data.get("n", ""))
    if not session_nonce or not secrets.compare_digest(nonce, session_nonce):
        raise SetupError("This install was started in another browser session: start again.", "slack_oauth_state")
    with transaction.atomic():
        spent = OAuthState.objects.filter(nonce=nonce, used_at__isnull=True).update(used_at=timezone.now())
    if spent != 1:
        raise SetupError("This install link was already used: start again.", "slack_oauth_state")
    guru = Guru.objects.filter(pk=data.get("g")).first()
    if guru is None:
        raise SetupError("The guru of this install no longer exists.", "slack_oauth_state")
    return guru


def slack_oauth_finish(*, state: str, code: str, redirect_uri: str, session_nonce: str) -> Integration:
    """Slack sent the maintainer back: spend the state once, trade the code for the bot token, save."""
    guru = _spend_state(state, session_nonce)
    integration = _integration(guru)
    if not integration.pk or not integration.client_id:
        raise SetupError("Start the install from the Integrations tab.", "slack_oauth_state")
    if not code or len(code) > 300:
        raise SetupError("Slack did not send an authorization code.", "slack_oauth_code")
    try:
        installed = slack_web("").exchange_code(client_id=integration.client_id,
                                                client_secret=integration.client_secret, code=code,
                                                redirect_uri=redirect_uri)
    except SlackError as exc:
        raise SetupError(f"Slack refused the install: {exc.code}.", "slack_oauth_code") from exc
    integration.access_token, integration.external_id = installed.access_token, installed.team_id
    integration.workspace_name, integration.bot_user_id = installed.team_name, installed.bot_user_id
    integration.app_id, integration.last_error, integration.last_error_at = installed.app_id, "", None
    integration.save()
    return integration


def slack_channels_set(*, integration: Integration, channels: list[dict[str, str]], allow_dm: bool) -> Integration:
    """Replace the allow-list: [{"id", "name", "mode"}], mode "mention" or "auto"."""
    if len(channels) > MAX_CHANNELS:
        raise SetupError(f"At most {MAX_CHANNELS} channels.")
    clean = []
    for entry in channels:
        channel_id, mode = str(entry.get("id", "")).strip(), str(entry.get("mode", "mention"))
        if not (channel_id.isalnum() and len(channel_id) <= 40) or mode not in MODES:
            raise SetupError(f"Not a channel id or mode: {channel_id!r} {mode!r}.")
        clean.append({"id": channel_id, "name": str(entry.get("name", ""))[:100], "mode": mode})
    integration.channels, integration.allow_dm = clean, allow_dm
    integration.save(update_fields=["channels", "allow_dm", "updated_at"])
    return integration


def slack_disconnect(*, integration: Integration) -> None:
    """Revoke the bot token at Slack (when it still works) and forget the integration."""
    if integration.access_token:
        # Already revoked or uninstalled at Slack: forgetting it here is all that is left to do.
        with contextlib.suppress(SlackError):
            slack_web(integration.access_token).revoke()
    integration.delete()


def integration_uninstalled(*, integration: Integration, why: str) -> None:
    """Slack said the app was uninstalled or its tokens revoked: stop using them, say so on the tab."""
    integration.access_token = integration.app_token = ""
    health_error(integration=integration, message=why)
    integration.save(update_fields=["access_token", "app_token", "updated_at"])


def health_event(*, integration: Integration) -> None:
    Integration.objects.filter(pk=integration.pk).update(last_event_at=timezone.now())


def health_error(*, integration: Integration, message: str) -> None:
    integration.last_error, integration.last_error_at = message[:500], timezone.now()
    Integration.objects.filter(pk=integration.pk).update(last_error=integration.last_error,
                                                         last_error_at=integration.last_error_at)
