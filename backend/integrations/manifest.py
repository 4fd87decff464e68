"""The Slack app manifest for one guru on this instance: pasted at api.slack.com, it creates the app."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from backend.integrations.models import Transport
from backend.integrations.services import BOT_SCOPES

BOT_EVENTS = ("app_mention", "message.channels", "message.groups", "message.im", "reaction_added",
              "reaction_removed", "app_uninstalled", "tokens_revoked")
EVENTS_PATH = "/integrations/slack/events/"
INTERACTIVITY_PATH = "/integrations/slack/interactivity/"
NEW_APP_URL = "https://api.slack.com/apps?new_app=1&manifest_json="


def slack_manifest(*, guru_name: str, site_url: str, transport: str, oauth_redirect: str) -> dict[str, Any]:
    """Scopes, events, the bot user and (Events API) the request URLs of this instance, filled in."""
    name, base = (guru_name.strip() or "OpenGuru")[:35], site_url.rstrip("/")
    socket = transport == Transport.SOCKET
    events: dict[str, Any] = {"bot_events": list(BOT_EVENTS)}
    interactivity: dict[str, Any] = {"is_enabled": True}
    if not socket:
        events["request_url"] = base + EVENTS_PATH
        interactivity["request_url"] = base + INTERACTIVITY_PATH
    return {
        "display_information": {"name": name, "description": f"Answers questions from {name}'s sources."[:140]},
        "features": {"bot_user": {"display_name": name, "always_online": True},
                     "app_home": {"messages_tab_enabled": True, "messages_tab_read_only_enabled": False}},
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}, "redirect_urls": [oauth_redirect]},
        "settings": {"event_subscriptions": events, "interactivity": interactivity, "org_deploy_enabled": False,
                     "socket_mode_enabled": socket, "token_rotation_enabled": False},
    }


def manifest_json(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2)


def new_app_link(manifest: dict[str, Any]) -> str:
    """Slack's "Create an app from a manifest" page with this manifest already filled in."""
    return NEW_APP_URL + quote(json.dumps(manifest, separators=(",", ":")))
