"""The Slack card's OAuth install: "Add to Slack" to Slack's authorize page, and back with a signed, single-use state.

The callback's state must be signed, fresh, unused, and started in this browser session by a maintainer.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from backend.gurus.models import Guru
from backend.integrations.models import Integration, OAuthState
from backend.integrations.services import BOT_SCOPES, STATE_MAX_AGE_S, STATE_SALT
from tests.dashboard.slack_support import AUTHORIZE_URL, CLIENT_ID, CLIENT_SECRET, SIGNING_SECRET
from tests.fakes.slack_server import FakeSlack

pytestmark = [pytest.mark.django_db]

TAB = "/dashboard/g/celery/integrations/"
START = TAB + "slack/oauth/"
CALLBACK = "/dashboard/integrations/slack/oauth/callback/"
REDIRECT_URI = "http://testserver" + CALLBACK
APP_FORM = {"oauth-client_id": CLIENT_ID, "oauth-client_secret": CLIENT_SECRET, "oauth-signing_secret": SIGNING_SECRET}


def start(client: Client) -> dict[str, str]:
    """Press "Add to Slack": the query Slack's authorize page is opened with."""
    response = client.post(START, APP_FORM)
    assert response.status_code == 302, response.content.decode()[-1500:]
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == AUTHORIZE_URL
    return {key: values[0] for key, values in parse_qs(location.query).items()}


def come_back(client: Client, **params: str) -> tuple[Any, str]:
    """Slack redirects the browser to the callback; the tab it lands on, with its message."""
    response = client.get(CALLBACK, params)
    assert response.status_code == 302
    return response, client.get(response["Location"]).content.decode()


def expired(state: str) -> str:
    """The same state, signed as if it had been issued longer ago than an install may take."""
    class Past(signing.TimestampSigner):
        def timestamp(self) -> str:
            return signing.b62_encode(int(time.time()) - STATE_MAX_AGE_S - 60)

    return Past(salt=STATE_SALT).sign_object(signing.loads(state, salt=STATE_SALT))


def test_add_to_slack_installs_through_oauth(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    query = start(client)
    assert query["client_id"] == CLIENT_ID and query["redirect_uri"] == REDIRECT_URI
    assert set(query["scope"].split(",")) == set(BOT_SCOPES)
    assert client.session["slack_oauth_nonce"] and client.session["slack_oauth_guru"] == "celery"
    assert not Integration.objects.get().access_token  # credentials kept, nothing installed yet

    code = card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI)
    response, page = come_back(client, code=code, state=query["state"])
    assert response["Location"] == TAB + "#slack"
    assert "Installed in the Slack workspace “Acme”" in page and '<span class="badge ok">connected</span>' in page
    integration = Integration.objects.get()
    assert integration.access_token.startswith(f"xoxb-{card_slack.team_id}-")
    assert integration.app_id == card_slack.app_id
    assert (integration.workspace_name, integration.bot_user_id) == ("Acme", card_slack.bot_user_id)
    assert integration.signing_secret == SIGNING_SECRET and integration.client_secret == CLIENT_SECRET
    assert "slack_oauth_nonce" not in client.session
    for secret in (integration.access_token, CLIENT_SECRET, SIGNING_SECRET):
        assert secret not in page


def test_app_credentials_are_checked_before_going_to_slack(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    response = client.post(START, {**APP_FORM, "oauth-client_id": "abc"})
    page = response.content.decode()
    assert response.status_code == 200 and "The client id is two numbers joined by a dot" in page
    assert CLIENT_SECRET not in page and SIGNING_SECRET not in page
    response = client.post(START, {**APP_FORM, "oauth-client_secret": ""})
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    assert "slack_oauth_nonce" not in client.session and not Integration.objects.exists()


def test_cancelled_at_slack_comes_back_as_a_message(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    query = start(client)
    _, page = come_back(client, error="access_denied", state=query["state"])
    assert "The app was not installed: you cancelled it. Nothing was changed." in page
    assert not Integration.objects.get().access_token


def test_slack_refusing_the_code_comes_back_as_a_message(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    query = start(client)
    _, page = come_back(client, code="fake-code-never-issued", state=query["state"])
    assert "Slack refused the install: invalid_code." in page and not Integration.objects.get().access_token


@pytest.mark.parametrize("spoil", [lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"), expired],
                         ids=["tampered", "expired"])
def test_a_bad_state_is_refused(client: Client, guru: Guru, card_slack: FakeSlack, spoil: Any) -> None:
    query = start(client)
    code = card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI)
    _, page = come_back(client, code=code, state=spoil(query["state"]))
    assert "This install link is invalid or expired: start again from the Integrations tab." in page
    assert not Integration.objects.get().access_token and card_slack.calls("oauth.v2.access") == []


def test_a_state_is_good_once(client: Client, guru: Guru, card_slack: FakeSlack) -> None:
    query = start(client)
    nonce = client.session["slack_oauth_nonce"]
    come_back(client, code=card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI), state=query["state"])
    first_token = Integration.objects.get().access_token

    session = client.session  # a replay that also brings the session's nonce back
    session["slack_oauth_nonce"], session["slack_oauth_guru"] = nonce, "celery"
    session.save()
    _, page = come_back(client, code=card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI), state=query["state"])
    assert "This install link was already used: start again." in page
    assert Integration.objects.get().access_token == first_token and OAuthState.objects.get().used_at is not None
    assert len(card_slack.calls("oauth.v2.access")) == 1


def test_a_state_from_another_browser_session_is_refused(client: Client, guru: Guru, card_slack: FakeSlack,
                                                         maintainer: Any) -> None:
    query = start(client)
    other = Client()  # the same maintainer, in another browser: the state alone must not install
    other.force_login(maintainer)
    code = card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI)
    response = other.get(CALLBACK, {"code": code, "state": query["state"]})
    assert response["Location"] == reverse("dashboard:home")
    assert "No Slack install was started in this browser session" in other.get(response["Location"]).content.decode()

    start(other)  # that browser starts an install of its own: still not the one this state belongs to
    _, page = come_back(other, code=code, state=query["state"])
    assert "This install was started in another browser session: start again." in page
    assert not Integration.objects.get().access_token

    _, page = come_back(client, code=code, state=query["state"])  # the state was not spent by the refusals
    assert "Installed in the Slack workspace “Acme”" in page


def test_the_callback_is_for_a_maintainer_of_the_guru(client: Client, guru: Guru, card_slack: FakeSlack,
                                                      maintainer: Any) -> None:
    query = start(client)
    code = card_slack.issue_oauth_code(redirect_uri=REDIRECT_URI)
    anonymous = Client().get(CALLBACK, {"code": code, "state": query["state"]})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    guru.maintainers.remove(maintainer)  # no longer a maintainer when Slack sends them back
    assert client.get(CALLBACK, {"code": code, "state": query["state"]}).status_code == 404
    assert not Integration.objects.get().access_token and card_slack.calls("oauth.v2.access") == []
