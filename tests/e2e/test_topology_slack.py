"""Slack on the production topology: a signed Events API request through nginx answered by a Celery worker over
Redis and PostgreSQL, then the same integration switched to Socket Mode, served by compose's `slack` service,
continuing the same Slack thread's conversation."""

from __future__ import annotations

import json
import os
import re

import httpx
import pytest

from backend.adapters.llm.fake import ScriptedReply
from tests.e2e.conftest import ANSWER, SLUG, Deployment
from tests.fakes.slack_server import FakeSlack

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's data stores"),
]

CHANNEL = "C0TOPOLOGY"
CONNECT = (
    "from backend.gurus.models import Guru; from backend.integrations import services as s; "
    "i = s.slack_connect(guru=Guru.objects.get(slug='{slug}'), site_url='http://localhost', tokens=s.PastedTokens("
    "bot_token='{bot}', transport='{transport}', signing_secret='{secret}', app_token='{app}')); "
    "s.slack_channels_set(integration=i, allow_dm=False, channels=[dict(id='{channel}', name='t', mode='mention')])"
)
SESSIONS = ("from backend.answering.models import Question as Q; "
            "print(sorted(str(q.binge_id) for q in Q.objects.filter(channel='SLACK')))")


def _connect(deployment: Deployment, slack: FakeSlack, transport: str) -> None:
    deployment.topology.manage("shell", "-c", CONNECT.format(
        slug=SLUG, bot=slack.bot_token, transport=transport, secret=slack.signing_secret, app=slack.app_token,
        channel=CHANNEL))


def test_slack_over_http_through_nginx_then_socket_mode_continuing_the_thread(deployment: Deployment) -> None:
    slack = deployment.fakes.slack
    deployment.fakes.script.answer = ScriptedReply(text=ANSWER, chunks=4)  # earlier tests of the package change it
    slack.add_channel(CHANNEL, "t")
    _connect(deployment, slack, "events")
    first = slack.user_message(CHANNEL, "How do I install widgets, asked from Slack?", mention=True)
    body = json.dumps(slack.event_callback(first)).encode()
    response = httpx.post(f"{deployment.topology.nginx_url}/integrations/slack/events/", content=body,
                          headers={"Content-Type": "application/json", **slack.signed_headers(body)}, timeout=30)
    assert response.status_code == 200, response.text  # nginx passed the exact bytes the signature covers
    slack.wait_for("chat.stopStream", timeout=120)
    assert slack.streams()[0].thread_ts == first["ts"] and slack.streams()[0].text == ANSWER

    _connect(deployment, slack, "socket")
    slack.wait_connected(1, timeout=60)  # the slack service picked the Socket Mode integration up by itself
    follow_up = slack.user_message(CHANNEL, "and with conda?", mention=True, thread_ts=str(first["ts"]))
    slack.wait_ack(slack.push(slack.event_callback(follow_up)), timeout=30)
    slack.wait_for("chat.stopStream", timeout=120, count=2)
    assert slack.streams()[1].thread_ts == first["ts"]
    sessions = re.findall(r"'([0-9a-f-]{36})'", deployment.topology.manage("shell", "-c", SESSIONS))
    assert len(sessions) == 2 and len(set(sessions)) == 1  # one Slack thread, one conversation
    assert "Slack Socket Mode connected" in deployment.topology.log_text("slack")
