"""Forms of the Slack card: tokens pasted for one workspace, the OAuth app's credentials, the channel allow-list."""

from __future__ import annotations

from django import forms
from django.http import QueryDict

from backend.integrations.models import Transport
from backend.integrations.services import MODES

MODE_LABELS = {"mention": "when @mentioned", "auto": "every top-level message"}
MAX_SECRET = 300


def _secret(label: str, help_text: str, *, required: bool = True) -> forms.CharField:
    # A password input is never filled back in: a token the maintainer typed does not come back in any page.
    widget = forms.PasswordInput(render_value=False, attrs={"autocomplete": "off", "spellcheck": "false",
                                                            "autocapitalize": "off"})
    return forms.CharField(label=label, help_text=help_text, max_length=MAX_SECRET, required=required,
                           strip=True, widget=widget)


def chosen_transport(value: object) -> str:
    """The transport named in a request (?transport=socket), Events API for anything else."""
    return Transport.SOCKET if value == Transport.SOCKET else Transport.EVENTS


class SlackTokensForm(forms.Form):
    """One workspace: the bot token, plus the signing secret (Events API) or the app-level token (Socket Mode)."""

    bot_token = _secret("Bot token", "OAuth & Permissions → Install to Workspace, then “Bot User OAuth Token” "
                                     "(starts with xoxb-).")
    signing_secret = _secret("Signing secret", "Basic Information → App Credentials → Signing Secret.")
    app_token = _secret("App-level token", "Basic Information → App-Level Tokens → Generate, with the scope "
                                           "connections:write (starts with xapp-).")

    prefix = "paste"

    def __init__(self, data: QueryDict | None = None, *, transport: str) -> None:
        super().__init__(data)
        self.transport = transport
        # Socket Mode needs no signing secret (no HTTP requests come from Slack); the Events API no app token.
        del self.fields["signing_secret" if transport == Transport.SOCKET else "app_token"]


class SlackOAuthForm(forms.Form):
    """An app installed through OAuth ("Add to Slack"), e.g. in several workspaces: its credentials."""

    client_id = forms.CharField(label="Client ID", max_length=100, strip=True,
                                help_text="Basic Information → App Credentials → Client ID.",
                                widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}))
    client_secret = _secret("Client secret", "Basic Information → App Credentials → Client Secret.")
    signing_secret = _secret("Signing secret", "Basic Information → App Credentials → Signing Secret.")

    prefix = "oauth"


class SlackChannelsForm(forms.Form):
    """The allow-list as posted: `channel` (ticked ids), `mode-<id>` and `name-<id>` per row, `allow_dm`."""

    allow_dm = forms.BooleanField(required=False, label="Answer direct messages")

    def channels(self) -> list[dict[str, str]]:
        """The ticked channels in page order, each once; the service checks every id and mode."""
        data = self.data if isinstance(self.data, QueryDict) else QueryDict()
        ticked = dict.fromkeys(str(channel_id) for channel_id in data.getlist("channel"))
        return [{"id": channel_id, "name": str(data.get(f"name-{channel_id}", "")),
                 "mode": str(data.get(f"mode-{channel_id}", MODES[0]))} for channel_id in ticked]
