"""Slack over Socket Mode through the real product: `./openguru start` runs the socket process, which connects
to a local fake Slack, acks each envelope, and the worker answers in the thread; after a restart (and after
Slack drops the socket) it reconnects and the thread's conversation continues; a feedback button pressed in
Slack arrives on the socket and is recorded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_restart import _create_indexed_guru
from tests.fakes.pdfs import write_pdf
from tests.fakes.slack_server import FakeSlack
from tests.support.product import Product, eventually, launch, manage, query, stop

pytestmark = pytest.mark.slow

SLUG = "broker-guru"
CHANNEL = "C0SUPPORT"
CONNECT = (  # `manage` runs with the product's environment, not the test's: the fake's address is set here
    "from django.conf import settings as c; c.OPENGURU_SLACK_API_URL = '{api}'; "
    "from backend.gurus.models import Guru; from backend.integrations import services as s; "
    "i = s.slack_connect(guru=Guru.objects.get(slug='{slug}'), site_url='http://localhost', tokens=s.PastedTokens("
    "bot_token='{bot}', transport='socket', app_token='{app}')); "
    "s.slack_channels_set(integration=i, allow_dm=False, "
    "channels=[dict(id='{channel}', name='support', mode='mention')])"
)
THREADS = ("from backend.answering.models import Question as Q; "
           "print(sorted(str(q.binge_id) for q in Q.objects.filter(channel='SLACK')))")


def _ask(slack: FakeSlack, text: str, thread_ts: str | None = None) -> dict[str, object]:
    event = slack.user_message(CHANNEL, text, mention=True, thread_ts=thread_ts)
    envelope = slack.push(slack.event_callback(event))
    slack.wait_ack(envelope, timeout=30)
    return event


def _answered(slack: FakeSlack, n: int) -> None:
    slack.wait_for("chat.stopStream", timeout=120, count=n)


def _press_thumbs_down(slack: FakeSlack, product: Product) -> None:
    """The answer's 👎 feedback button, pressed in Slack: an `interactive` envelope on the socket."""
    actions = [element for block in slack.streams()[0].blocks or [] for element in block.get("elements", [])
               if element.get("type") == "feedback_buttons"]
    value = actions[0]["negative_button"]["value"]
    payload = {"type": "block_actions", "api_app_id": slack.app_id, "team": {"id": slack.team_id},
               "user": {"id": "U0HUMAN"}, "actions": [{"action_id": actions[0]["action_id"], "value": value}]}
    slack.wait_ack(slack.push(payload, type="interactive"), timeout=30)
    pk = value.split(":")[1]
    eventually(lambda: query(product, "SELECT feedback FROM answering_question WHERE id = ?", pk) == (-1,), "the vote")


def test_socket_mode_answers_in_threads_and_reconnects_after_a_restart_and_a_drop(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [
        ["The visibility timeout redelivers unacknowledged tasks to another worker after one hour."]])
    with FakeSlack() as slack:
        slack.add_channel(CHANNEL, "support")
        env = {"OPENGURU_SLACK_API_URL": slack.api_url, "OPENGURU_SLACK_SOCKET_RESCAN_S": "0.5"}
        data_dir = tmp_path / "data"
        product: Product = launch(data_dir, env=env)
        try:
            _create_indexed_guru(product, pdf)
            manage(product, "shell", "-c", CONNECT.format(api=slack.api_url, slug=SLUG, bot=slack.bot_token,
                                                          app=slack.app_token, channel=CHANNEL))
            slack.wait_connected(1, timeout=60)
            first = _ask(slack, "What does the visibility timeout do?")
            _answered(slack, 1)
            assert slack.streams()[0].thread_ts == first["ts"] and "visibility" in slack.streams()[0].text.lower()
            _press_thumbs_down(slack, product)
        finally:
            assert stop(product) == 0
        again = launch(data_dir, env=env)
        try:
            slack.wait_connected(2, timeout=60)  # the restarted socket process connected again by itself
            _ask(slack, "and after how long?", thread_ts=str(first["ts"]))
            _answered(slack, 2)
            slack.drop_connections()
            slack.wait_connected(3, timeout=60)  # the SDK client reconnects after Slack drops the socket
            _ask(slack, "Which worker gets the task?")
            _answered(slack, 3)
            binges = re.findall(r"'([0-9a-f-]{36})'", manage(again, "shell", "-c", THREADS))
            assert len(binges) == 3 and len(set(binges)) == 2  # the follow-up continued the first thread's session
        finally:
            assert stop(again) == 0
    assert "Slack Socket Mode connected" in (data_dir / "logs" / "chat_listeners.log").read_text()
