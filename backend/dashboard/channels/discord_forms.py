"""Forms of the Discord card: the bot token (or the operator's DISCORD_BOT_TOKEN), the channel allow-list."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import QueryDict

from backend.integrations.discord_setup import MAX_TOKEN
from backend.integrations.services import MAX_CHANNELS

OFF = "off"
MODE_LABELS = {OFF: "off", "mention": "on mention", "auto": "every message"}


class DiscordTokenForm(forms.Form):
    """The bot token pasted from the Developer Portal, or "use DISCORD_BOT_TOKEN" when the operator set one."""

    use_env = forms.BooleanField(required=False, label="Use the bot token of DISCORD_BOT_TOKEN (set by the operator)")
    # A password input is never filled back in: a token the maintainer typed does not come back in any page.
    token = forms.CharField(
        label="Bot token", max_length=MAX_TOKEN, required=False, strip=True,
        help_text="Developer Portal → your application → Bot → Reset Token, then Copy.",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off", "spellcheck": "false",
                                                              "autocapitalize": "off"}))

    prefix = "discord"

    def __init__(self, data: QueryDict | None = None, *, env_available: bool) -> None:
        super().__init__(data)
        if not env_available:  # no DISCORD_BOT_TOKEN on this instance, or another guru uses it
            del self.fields["use_env"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("use_env") and not cleaned.get("token"):
            self.add_error("token", "Paste the bot token.")
        return cleaned


class DiscordChannelsForm(forms.Form):
    """The allow-list as posted: `mode-<id>` per listed channel (off, mention, auto), and `allow_dm`."""

    allow_dm = forms.BooleanField(required=False, label="Answer direct messages")

    def channels(self) -> list[dict[str, str]]:
        """The channels not set to "off", in page order, at most MAX_CHANNELS + 1 (the service refuses more)."""
        data = self.data if isinstance(self.data, QueryDict) else QueryDict()
        chosen: list[dict[str, str]] = []
        for key in data:
            if key.startswith("mode-") and (mode := str(data.get(key, OFF))) != OFF:
                chosen.append({"id": key.removeprefix("mode-")[:40], "mode": mode[:20]})
                if len(chosen) > MAX_CHANNELS:
                    break
        return chosen
