"""Slack bot test fixtures (shared by tests/channels/conftest.py): a fake Slack, a connected guru, signed posts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.integrations.models import Integration, Transport
from backend.integrations.services import PastedTokens, slack_channels_set, slack_connect
from tests.channels.parity_support import ChannelScript
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.slack_server import FakeSlack, signed_headers
from tests.integration.answering.answer_support import make_indexed_guru

SITE = "http://openguru.test"
ALLOWED, AUTO, ELSEWHERE = "C0ALLOWED", "C0AUTO", "C0ELSEWHERE"
EVENTS = "/integrations/slack/events/"
INTERACTIVITY = "/integrations/slack/interactivity/"


@pytest.fixture
def slack(settings: SettingsWrapper) -> Iterator[FakeSlack]:
    cache.clear()
    with FakeSlack() as fake:
        for channel, name in ((ALLOWED, "support"), (AUTO, "ask-docs"), (ELSEWHERE, "random")):
            fake.add_channel(channel, name)
        settings.OPENGURU_SLACK_API_URL = fake.api_url
        settings.OPENGURU_SLACK_UPDATE_INTERVAL_S = 0.0  # every delta edits the message: the test sees them all
        yield fake


@pytest.fixture
def slack_model(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> OpenAIFakeServer:
    openai_server.script = ChannelScript()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    return openai_server


@pytest.fixture
def slack_guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return make_indexed_guru(django_capture_on_commit_callbacks)


def connect(guru: Guru, slack: FakeSlack, transport: str = Transport.EVENTS) -> Integration:
    tokens = PastedTokens(bot_token=slack.bot_token, transport=transport, signing_secret=slack.signing_secret,
                          app_token=slack.app_token)
    integration = slack_connect(guru=guru, tokens=tokens, site_url=SITE)
    return slack_channels_set(integration=integration, allow_dm=False, channels=[
        {"id": ALLOWED, "name": "support", "mode": "mention"}, {"id": AUTO, "name": "ask-docs", "mode": "auto"}])


@pytest.fixture
def integration(slack_guru: Guru, slack: FakeSlack, slack_model: OpenAIFakeServer) -> Integration:
    return connect(slack_guru, slack)


def post_event(client: Client, slack: FakeSlack, payload: dict[str, Any], *, timestamp: int | None = None,
               secret: str | None = None, headers: dict[str, str] | None = None) -> Any:
    body = json.dumps(payload).encode()
    signed = slack.signed_headers(body, timestamp) if secret is None else _signed(body, secret, timestamp)
    extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in {**signed, **(headers or {})}.items()}
    return client.post(EVENTS, data=body, content_type="application/json", **extra)


def _signed(body: bytes, secret: str, timestamp: int | None) -> dict[str, str]:
    return signed_headers(body, secret, timestamp)


def final_text(slack: FakeSlack, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    """The bot's replies in the thread (the question itself left out)."""
    return [m for m in slack.thread(channel, thread_ts) if m.get("user") == slack.bot_user_id or m.get("bot_id")]
