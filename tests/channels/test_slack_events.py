"""The Events API endpoint end to end: signed events in, the answer streamed into the thread by the real
slack_sdk against a local fake Slack, thread memory, feedback, refusals and the not-allowed reply."""

from __future__ import annotations

import json
import time

import pytest
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Channel, Question
from backend.core.sidecars import free_port
from backend.integrations.models import ChatEvent, Integration, Thread
from backend.integrations.services import SetupError, slack_disconnect, slack_oauth_begin
from tests.channels.parity_support import ANSWER
from tests.channels.slack_support import (
    ALLOWED,
    AUTO,
    ELSEWHERE,
    INTERACTIVITY,
    post_event,
)
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.slack_server import FakeSlack
from tests.integration.answering.answer_support import QUESTION

pytestmark = [pytest.mark.django_db(transaction=True)]


def _text(blocks: object) -> str:
    return json.dumps(blocks, ensure_ascii=False)


def _mention(client: Client, slack: FakeSlack, text: str = QUESTION, channel: str = ALLOWED,
             thread_ts: str | None = None) -> dict[str, object]:
    event = slack.user_message(channel, text, mention=True, thread_ts=thread_ts)
    response = post_event(client, slack, slack.event_callback(event))
    assert response.status_code == 200, response.content
    return event


def test_url_verification_answers_the_challenge_only_when_signed(client: Client, slack: FakeSlack,
                                                                 integration: Integration) -> None:
    payload = {"token": "t", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
               "type": "url_verification"}
    assert post_event(client, slack, payload).json() == {"challenge": payload["challenge"]}
    refused = post_event(client, slack, payload, secret="another-apps-secret")
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_signature"


def test_badly_signed_replayed_and_unsigned_events_are_refused_and_do_nothing(
        client: Client, slack: FakeSlack, integration: Integration) -> None:
    event = slack.user_message(ALLOWED, QUESTION, mention=True)
    payload = slack.event_callback(event)
    assert post_event(client, slack, payload, secret="not-the-signing-secret").status_code == 401
    assert post_event(client, slack, payload, timestamp=int(time.time()) - 6 * 60).status_code == 401  # replayed
    unsigned = client.post("/integrations/slack/events/", data=json.dumps(payload), content_type="application/json")
    assert unsigned.status_code == 401
    assert not Question.objects.exists() and not ChatEvent.objects.exists() and not slack.calls("chat.startStream")


def test_a_mention_is_answered_in_its_thread_streamed_natively_with_trust_sources_and_feedback(
        client: Client, slack: FakeSlack, integration: Integration) -> None:
    event = _mention(client, slack)
    stream = slack.streams()[0]
    assert stream.thread_ts == event["ts"] and stream.channel == ALLOWED and stream.state == "completed"
    assert stream.start["recipient_user_id"] == "U0HUMAN" and stream.start["recipient_team_id"] == slack.team_id
    tasks = [c for c in stream.chunks if c["type"] == "task_update"]
    assert tasks[0]["status"] == "in_progress" and "Searching Docs Guru's sources" in tasks[0]["title"]
    assert tasks[-1]["status"] == "complete"
    texts = [c["text"] for c in stream.chunks if c["type"] == "markdown_text"]
    assert "".join(texts) == ANSWER and len(texts) >= 1
    footer = _text(stream.blocks)
    assert "Trust" in footer and "🟢" in footer and "*Sources*" in footer and "[1]" in footer
    assert "View this answer on the web" in footer and "http://openguru.test/g/docs/answers/" in footer
    assert '"feedback_buttons"' in footer
    question = Question.objects.get()
    assert question.channel == Channel.SLACK and question.binge.place == "Fake Workspace · #support"


def test_a_follow_up_in_the_thread_continues_the_conversation_and_a_new_thread_starts_another(
        client: Client, slack: FakeSlack, integration: Integration, slack_model: OpenAIFakeServer) -> None:
    first = _mention(client, slack)
    _mention(client, slack, "and the delay?", thread_ts=str(first["ts"]))
    other = _mention(client, slack, "How do I retry a task, again?")
    first_q, follow_up, fresh = Question.objects.order_by("pk")
    assert follow_up.binge_id == first_q.binge_id and fresh.binge_id != first_q.binge_id
    assert Thread.objects.count() == 2
    history = " ".join(text for _, text in slack_model.script.requests[-2].messages)
    assert QUESTION in history or ANSWER[:20] in history  # the follow-up was asked with the thread's history
    assert slack.streams()[1].thread_ts == first["ts"] and slack.streams()[2].thread_ts == other["ts"]


def test_a_retried_event_is_answered_once(client: Client, slack: FakeSlack, integration: Integration) -> None:
    event = slack.user_message(ALLOWED, QUESTION, mention=True)
    payload = slack.event_callback(event)
    for retry in ("", "1", "2"):
        headers = {"X-Slack-Retry-Num": retry, "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        assert post_event(client, slack, payload, headers=headers).status_code == 200
    assert Question.objects.count() == 1 and len(slack.streams()) == 1


def test_where_the_bot_may_not_answer_the_asker_alone_is_told_where_to_allow_it(
        client: Client, slack: FakeSlack, integration: Integration) -> None:
    _mention(client, slack, channel=ELSEWHERE)
    (note,) = slack.ephemerals(ELSEWHERE)
    assert note["ephemeral_to"] == "U0HUMAN" and "not set up to answer in this channel" in note["text"]
    assert "http://openguru.test/dashboard/g/docs/integrations/" in note["text"]
    assert not Question.objects.exists() and not slack.streams()


def test_auto_channel_answers_top_level_messages_and_ignores_the_bots_own(client: Client, slack: FakeSlack,
                                                                         integration: Integration) -> None:
    event = slack.user_message(AUTO, QUESTION)
    assert post_event(client, slack, slack.event_callback(event)).status_code == 200
    own = {**slack.user_message(AUTO, "an answer", user=slack.bot_user_id), "bot_id": slack.bot_id}
    post_event(client, slack, slack.event_callback(own))
    assert Question.objects.count() == 1 and slack.streams()[0].thread_ts == event["ts"]


def test_a_question_the_sources_do_not_cover_is_refused_as_a_refusal(client: Client, slack: FakeSlack,
                                                                     integration: Integration) -> None:
    _mention(client, slack, "How do I bake sourdough bread?")
    footer = _text(slack.streams()[0].blocks)
    assert "Not answered" in footer and "do not cover" in footer and "Trust" not in footer
    assert Question.objects.get().out_of_context


def test_feedback_buttons_and_reactions_are_recorded_on_the_question(client: Client, slack: FakeSlack,
                                                                     integration: Integration) -> None:
    _mention(client, slack)
    question, stream = Question.objects.get(), slack.streams()[0]
    payload = {"type": "block_actions", "api_app_id": slack.app_id, "team": {"id": slack.team_id},
               "user": {"id": "U0HUMAN"}, "actions": [{"action_id": "openguru_feedback", "value": f"-1:{question.pk}"}]}
    body = "payload=" + json.dumps(payload)
    headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in slack.signed_headers(body.encode()).items()}
    assert client.post(INTERACTIVITY, data=body, content_type="application/x-www-form-urlencoded",
                       **headers).status_code == 200
    question.refresh_from_db()
    assert question.feedback == -1
    reaction = {"type": "reaction_added", "user": "U0HUMAN", "reaction": "thumbsup",
                "item": {"type": "message", "channel": ALLOWED, "ts": stream.ts}}
    post_event(client, slack, slack.event_callback(reaction))
    question.refresh_from_db()
    assert question.feedback == 1
    post_event(client, slack, slack.event_callback({**reaction, "type": "reaction_removed"}))
    question.refresh_from_db()
    assert question.feedback is None


def test_where_streaming_is_unavailable_the_answer_is_edited_in_then_formatted_for_slack(
        client: Client, slack: FakeSlack, integration: Integration, slack_model: OpenAIFakeServer) -> None:
    slack_model.script.answer = "Use **self.retry()** [1]:\n\n```python\nself.retry(countdown=5)\n```\n\nSee [docs](https://docs.celeryq.dev)."
    slack.disable_streaming()
    event = _mention(client, slack)
    updates = slack.calls("chat.update")
    assert slack.calls("chat.postMessage") and updates
    final = updates[-1].params
    text = _text(final["blocks"])
    assert "*self.retry()*" in text and "```\\nself.retry(countdown=5)\\n```" in text
    assert "<https://docs.celeryq.dev|docs>" in text and "feedback_buttons" in text
    assert slack.calls("chat.postMessage")[0].params["thread_ts"] == event["ts"]


def test_an_uninstall_stops_the_bot_and_shows_on_the_tab(client: Client, slack: FakeSlack,
                                                        integration: Integration) -> None:
    post_event(client, slack, slack.event_callback({"type": "app_uninstalled"}))
    integration.refresh_from_db()
    assert integration.access_token == "" and "uninstalled" in integration.last_error
    _mention(client, slack)
    assert not Question.objects.exists()


def test_disconnect_still_forgets_the_integration_when_slack_is_out_of_reach(
        settings: SettingsWrapper, integration: Integration) -> None:
    settings.OPENGURU_SLACK_API_URL = f"http://127.0.0.1:{free_port()}/api/"  # nothing listens there
    slack_disconnect(integration=integration)
    assert not Integration.objects.exists()


def test_an_oauth_install_does_not_rewrite_a_working_connection(integration: Integration) -> None:
    with pytest.raises(SetupError, match="already connected"):
        slack_oauth_begin(guru=integration.guru, client_id="1.2", client_secret="s" * 16, signing_secret="t" * 16,
                          redirect_uri="http://openguru.test/cb", site_url="http://openguru.test/")
    integration.refresh_from_db()
    assert integration.client_id == "" and integration.signing_secret != "t" * 16
