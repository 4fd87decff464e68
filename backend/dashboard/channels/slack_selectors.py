"""Read paths of the Slack card: the manifest for this instance, and the channels the bot may be allowed in."""

from __future__ import annotations

from dataclasses import dataclass

from backend.adapters.slack.web import SlackError
from backend.integrations.manifest import manifest_json, new_app_link, slack_manifest
from backend.integrations.models import Integration
from backend.integrations.services import MODES, slack_web


@dataclass(frozen=True)
class AppManifest:
    """Step 1 of the setup: the manifest to paste at Slack, and Slack's page that creates the app from it."""

    transport: str
    text: str
    create_url: str


@dataclass(frozen=True)
class ChannelRow:
    id: str
    name: str
    private: bool
    allowed: bool
    mode: str
    member: bool  # the bot is in the channel now (False: saved earlier, the bot has left it or Slack is down)


def slack_connected(integration: Integration | None) -> bool:
    """A bot token to answer with (Slack's uninstall or tokens_revoked events clear it)."""
    return bool(integration is not None and integration.access_token)


def app_manifest(*, guru_name: str, site_url: str, transport: str, oauth_redirect: str) -> AppManifest:
    manifest = slack_manifest(guru_name=guru_name, site_url=site_url, transport=transport,
                              oauth_redirect=oauth_redirect)
    return AppManifest(transport=transport, text=manifest_json(manifest), create_url=new_app_link(manifest))


def _saved(integration: Integration) -> dict[str, dict[str, str]]:
    entries = integration.channels if isinstance(integration.channels, list) else []
    return {str(e.get("id")): e for e in entries if isinstance(e, dict) and e.get("id")}


def slack_channel_rows(integration: Integration) -> tuple[list[ChannelRow], str]:
    """The channels the bot is in (ticked when allowed), then allowed ones it is not in; and Slack's error, if any.

    When Slack cannot list the channels the saved allow-list is still shown, so it can be read and trimmed.
    """
    saved = _saved(integration)
    error = ""
    try:
        joined = slack_web(integration.access_token).bot_channels()
    except SlackError as exc:
        reason = "Slack could not be reached" if exc.code == "connection_failed" else (
            f"Slack did not list the bot's channels ({exc.code})")
        joined, error = [], f"{reason}; the saved list is shown."
    rows = [ChannelRow(c.id, c.name or saved.get(c.id, {}).get("name", ""), c.private, c.id in saved,
                       _mode(saved.get(c.id)), member=True) for c in sorted(joined, key=lambda c: c.name)]
    listed = {c.id for c in joined}
    rows += [ChannelRow(channel_id, str(entry.get("name", "")), False, True, _mode(entry), member=False)
             for channel_id, entry in saved.items() if channel_id not in listed]
    return rows, error


def _mode(entry: dict[str, str] | None) -> str:
    mode = (entry or {}).get("mode", MODES[0])
    return mode if mode in MODES else MODES[0]
