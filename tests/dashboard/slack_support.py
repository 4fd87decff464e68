"""Fixture card_slack (a plugin of tests/conftest.py): the fake Slack with Slack-like secrets, channels, settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.fakes.slack_server import FakeSlack

# Slack's signing and client secrets are 32 hex characters; the services refuse anything else.
SIGNING_SECRET = "8f742231b10e8888abcd99d8a4e3f5a5"
CLIENT_SECRET = "3a1b2c3d4e5f60718293a4b5c6d7e8f9"
CLIENT_ID = "1111.2222"
AUTHORIZE_URL = "http://127.0.0.1:9/oauth/v2/authorize"  # never opened: the tests read the redirect's address
CHANNELS = (("C0GENERAL", "general", False), ("C0SUPPORT", "support", False), ("G0PRIVATE", "maintainers", True))


@pytest.fixture
def card_slack(settings: SettingsWrapper) -> Iterator[FakeSlack]:
    """A fake Slack whose workspace is "Acme" with three channels the bot is in; the setup services call it."""
    with FakeSlack(team_name="Acme", signing_secret=SIGNING_SECRET, client_id=CLIENT_ID,
                   client_secret=CLIENT_SECRET) as fake:
        for channel_id, name, private in CHANNELS:
            fake.add_channel(channel_id, name, is_private=private)
        settings.OPENGURU_SLACK_API_URL = fake.api_url
        settings.OPENGURU_SLACK_AUTHORIZE_URL = AUTHORIZE_URL
        yield fake
