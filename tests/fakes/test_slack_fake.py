"""Contract: the real slack_sdk (WebClient, chat_stream, Socket Mode clients) works against the fake Slack."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient as AiohttpSocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.fakes.slack_server import STREAMING_UNAVAILABLE, FakeSlack, signed_headers

CHANNEL = "C0GENERAL"
FEEDBACK = [{"type": "context_actions", "elements": [{
    "type": "feedback_buttons", "action_id": "answer_feedback",
    "positive_button": {"text": {"type": "plain_text", "text": "Good"}, "value": "up"},
    "negative_button": {"text": {"type": "plain_text", "text": "Bad"}, "value": "down"}}]}]


@pytest.fixture
def web(fake_slack: FakeSlack) -> WebClient:
    return WebClient(token=fake_slack.bot_token, base_url=fake_slack.api_url)


def _error(call: Any) -> str:
    with pytest.raises(SlackApiError) as raised:
        call()
    return str(raised.value.response["error"])


# --- Web API ---------------------------------------------------------------------------------------------------

def test_auth_test_names_the_bot_and_bad_tokens_and_methods_are_refused(fake_slack: FakeSlack, web: WebClient) -> None:
    me = web.auth_test()
    assert (me["team_id"], me["user_id"], me["bot_id"]) == (fake_slack.team_id, fake_slack.bot_user_id,
                                                            fake_slack.bot_id)
    assert me["url"] == "https://fake-workspace.slack.com/"
    assert _error(WebClient(token="xoxb-unknown", base_url=fake_slack.api_url).auth_test) == "invalid_auth"
    assert _error(lambda: web.api_call("chat.fly")) == "unknown_method"
    assert [(c.method, c.token) for c in fake_slack.calls()][0] == ("auth.test", fake_slack.bot_token)


def test_a_reply_in_a_thread_is_updated_and_read_back(fake_slack: FakeSlack, web: WebClient) -> None:
    question = fake_slack.user_message(CHANNEL, "what is a guru?", mention=True)
    posted = web.chat_postMessage(channel=CHANNEL, thread_ts=question["ts"], text="searching the sources…")
    assert posted["channel"] == CHANNEL and float(posted["ts"]) > float(question["ts"])
    web.chat_update(channel=CHANNEL, ts=posted["ts"], text="A guru answers.", blocks=FEEDBACK)
    parent, reply = fake_slack.thread(CHANNEL, question["ts"])
    assert parent["text"] == f"<@{fake_slack.bot_user_id}> what is a guru?"
    assert (reply["text"], reply["blocks"], reply["thread_ts"]) == ("A guru answers.", FEEDBACK, question["ts"])
    assert "edited" in reply
    assert fake_slack.wait_for("chat.update").params["blocks"] == FEEDBACK
    assert _error(lambda: web.chat_update(channel=CHANNEL, ts=question["ts"], text="x")) == "cant_update_message"


def test_ephemeral_reply_is_kept_apart_from_the_thread(fake_slack: FakeSlack, web: WebClient) -> None:
    question = fake_slack.user_message(CHANNEL, "hello")
    sent = web.chat_postEphemeral(channel=CHANNEL, user="U0HUMAN", text="Not enabled here.", thread_ts=question["ts"])
    (note,) = fake_slack.ephemerals(CHANNEL)
    assert (note["ts"], note["ephemeral_to"], note["text"]) == (sent["message_ts"], "U0HUMAN", "Not enabled here.")
    assert [m["ts"] for m in fake_slack.thread(CHANNEL, question["ts"])] == [question["ts"]]


def test_chat_stream_helper_starts_appends_and_stops_with_blocks(fake_slack: FakeSlack, web: WebClient) -> None:
    question = fake_slack.user_message(CHANNEL, "explain", mention=True)
    streamer = web.chat_stream(channel=CHANNEL, thread_ts=question["ts"], recipient_team_id=fake_slack.team_id,
                               recipient_user_id="U0HUMAN", buffer_size=8)
    for piece in ("*Gurus* ", "answer ", "in threads."):
        streamer.append(markdown_text=piece)
    streamer.stop(blocks=FEEDBACK)
    assert [c.method for c in fake_slack.calls()] == ["chat.startStream", "chat.appendStream", "chat.stopStream"]
    stream = fake_slack.stream(CHANNEL, str(streamer.ts))
    assert (stream.text, stream.state, stream.blocks, stream.thread_ts) == (
        "*Gurus* answer in threads.", "completed", FEEDBACK, question["ts"])
    assert all(chunk["type"] == "markdown_text" for chunk in stream.chunks)
    reply = fake_slack.thread(CHANNEL, question["ts"])[-1]
    assert (reply["ts"], reply["text"], reply["blocks"]) == (streamer.ts, stream.text, FEEDBACK)
    append = lambda: web.chat_appendStream(channel=CHANNEL, ts=str(streamer.ts), markdown_text="more")  # noqa: E731
    assert _error(append) == "message_not_in_streaming_state"


def test_streaming_rules_and_the_unavailable_knob(fake_slack: FakeSlack, web: WebClient) -> None:
    question = fake_slack.user_message(CHANNEL, "explain", mention=True)
    no_recipient = lambda: web.chat_startStream(channel=CHANNEL, thread_ts=question["ts"], markdown_text="x")  # noqa: E731
    assert _error(no_recipient) == "missing_recipient_team_id"
    fake_slack.disable_streaming()
    streamer = web.chat_stream(channel=CHANNEL, thread_ts=question["ts"], recipient_team_id=fake_slack.team_id,
                               recipient_user_id="U0HUMAN")
    assert STREAMING_UNAVAILABLE == "channel_type_not_supported"
    assert _error(lambda: streamer.stop(markdown_text="answer")) == STREAMING_UNAVAILABLE
    fake_slack.enable_streaming()
    dm = web.chat_startStream(channel="D0HUMAN", thread_ts=question["ts"], markdown_text="in a DM")
    assert fake_slack.stream("D0HUMAN", dm["ts"]).text == "in a DM"


def test_rate_limited_call_is_retried_by_the_sdk_handler(fake_slack: FakeSlack) -> None:
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after=0)
    plain = WebClient(token=fake_slack.bot_token, base_url=fake_slack.api_url)
    with pytest.raises(SlackApiError) as raised:
        plain.chat_postMessage(channel=CHANNEL, text="hi")
    assert raised.value.response.status_code == 429 and raised.value.response.headers["Retry-After"] == "0"
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after=0)
    retrying = WebClient(token=fake_slack.bot_token, base_url=fake_slack.api_url,
                         retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)])
    assert retrying.chat_postMessage(channel=CHANNEL, text="hi")["ok"]
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [429, 429, 200]


def test_form_bodies_token_fields_and_lookups(fake_slack: FakeSlack, web: WebClient) -> None:
    fake_slack.add_channel(CHANNEL, "general")
    fake_slack.add_user("U0HUMAN", "ada")
    body = f"token={fake_slack.bot_token}&channel={CHANNEL}&text=hi&blocks={json.dumps(FEEDBACK)}".encode()
    request = urllib.request.Request(f"{fake_slack.api_url}chat.postMessage", data=body, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=5) as response:  # the token as a field, as old clients send it
        assert json.load(response)["ok"] is True
    call = fake_slack.wait_for("chat.postMessage")
    assert (call.token, call.params["blocks"]) == (fake_slack.bot_token, FEEDBACK)
    assert web.conversations_info(channel=CHANNEL)["channel"]["name"] == "general"
    assert _error(lambda: web.conversations_info(channel="C0NOPE")) == "channel_not_found"
    assert web.team_info()["team"]["name"] == fake_slack.team_name
    assert web.users_info(user="U0HUMAN")["user"]["name"] == "ada"


def test_the_bots_channels_page_and_a_token_revoked_at_slack_stops_working(fake_slack: FakeSlack,
                                                                            web: WebClient) -> None:
    for channel_id, name in (("C0A", "a"), ("C0B", "b"), ("G0C", "c"), ("D0D", "ada")):
        fake_slack.add_channel(channel_id, name)
    fake_slack.add_channel("C0OUT", "not-joined", is_member=False)
    pages = [page["channels"] for page in web.users_conversations(types="public_channel,private_channel", limit=2)]
    assert [[c["id"] for c in page] for page in pages] == [["C0A", "C0B"], ["G0C"]]
    assert pages[1][0]["is_private"] is True
    fake_slack.revoke_token(fake_slack.bot_token)
    assert _error(web.auth_test) == "token_revoked"


def test_oauth_exchange_is_one_time_and_checks_the_secret(fake_slack: FakeSlack) -> None:
    fake_slack.add_workspace("T0OTHER", "Other Co")
    code = fake_slack.issue_oauth_code(team_id="T0OTHER")
    anonymous = WebClient(base_url=fake_slack.api_url)
    wrong = lambda: anonymous.oauth_v2_access(client_id=fake_slack.client_id, client_secret="no", code=code)  # noqa: E731
    assert _error(wrong) == "bad_client_secret"
    granted = anonymous.oauth_v2_access(client_id=fake_slack.client_id, client_secret=fake_slack.client_secret,
                                        code=code)
    assert granted["access_token"].startswith("xoxb-") and granted["team"] == {"id": "T0OTHER", "name": "Other Co"}
    assert (granted["bot_user_id"], granted["app_id"]) == ("UT0OTHERBOT", fake_slack.app_id)
    again = lambda: anonymous.oauth_v2_access(client_id=fake_slack.client_id,  # noqa: E731
                                              client_secret=fake_slack.client_secret, code=code)
    assert _error(again) == "invalid_code"
    installed = WebClient(token=granted["access_token"], base_url=fake_slack.api_url)
    assert installed.auth_test()["team_id"] == "T0OTHER"
    assert installed.auth_revoke()["revoked"] is True
    assert _error(installed.auth_test) == "token_revoked"


def test_signed_headers_pass_slacks_verifier(fake_slack: FakeSlack) -> None:
    body = json.dumps(fake_slack.event_callback(fake_slack.user_message(CHANNEL, "hi", mention=True))).encode()
    headers = fake_slack.signed_headers(body)
    assert SignatureVerifier(fake_slack.signing_secret).is_valid_request(body, headers)
    assert not SignatureVerifier("another-secret").is_valid_request(body, headers)
    old = signed_headers(body, fake_slack.signing_secret, timestamp=1_000_000_000)
    assert not SignatureVerifier(fake_slack.signing_secret).is_valid_request(body, old)  # outside 5 minutes


# --- Socket Mode -------------------------------------------------------------------------------------------------

def test_only_issued_tickets_and_app_tokens_open_a_socket(fake_slack: FakeSlack, web: WebClient) -> None:
    assert _error(lambda: web.apps_connections_open(app_token=fake_slack.bot_token)) == "not_allowed_token_type"
    url = web.apps_connections_open(app_token=fake_slack.app_token)["url"]
    with pytest.raises(InvalidStatus):
        connect(url.replace("ticket=", "ticket=forged"), open_timeout=5).close()
    with connect(url, open_timeout=5) as socket:
        hello = json.loads(socket.recv(timeout=5))
    assert (hello["type"], hello["connection_info"]["app_id"]) == ("hello", fake_slack.app_id)


class AsyncSocketClient:
    """The aiohttp Socket Mode client on its own event loop thread, acking every envelope it receives."""

    def __init__(self, slack: FakeSlack, ping_interval: float) -> None:
        self.received: list[SocketModeRequest] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.client = self._run(self._start(slack, ping_interval))

    def _run(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout=10)

    async def _start(self, slack: FakeSlack, ping_interval: float) -> AiohttpSocketModeClient:
        client = AiohttpSocketModeClient(app_token=slack.app_token, ping_interval=ping_interval,
                                         web_client=AsyncWebClient(base_url=slack.api_url))

        async def ack(client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
            self.received.append(request)
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

        client.socket_mode_request_listeners.append(ack)
        await client.connect()
        return client

    def close(self) -> None:
        self._run(self.client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


@pytest.fixture
def socket_client(fake_slack: FakeSlack) -> Iterator[AsyncSocketClient]:
    # A short ping interval: an abrupt drop is noticed at the next ping, so the test waits ~0.5 s, not 5.
    client = AsyncSocketClient(fake_slack, ping_interval=0.5)
    yield client
    client.close()


def _round_trip(slack: FakeSlack, text: str) -> dict[str, Any]:
    payload = slack.event_callback(slack.user_message(CHANNEL, text, mention=True))
    return {"id": slack.push(payload), "payload": payload}


def test_aiohttp_client_receives_acks_and_reconnects_on_its_own(fake_slack: FakeSlack,
                                                                 socket_client: AsyncSocketClient) -> None:
    fake_slack.wait_connected(1)
    sent = _round_trip(fake_slack, "first")
    assert fake_slack.wait_ack(sent["id"]) == {"envelope_id": sent["id"]}
    assert socket_client.received[0].type == "events_api" and socket_client.received[0].payload == sent["payload"]
    for connection, drop in enumerate((lambda: fake_slack.drop_connections("fin"),
                                       lambda: fake_slack.drop_connections("rst"),
                                       lambda: fake_slack.send_disconnect()), start=2):
        drop()
        fake_slack.wait_connected(connection)
        fake_slack.wait_ack(_round_trip(fake_slack, f"after reconnect {connection}")["id"])
    assert [c.token for c in fake_slack.calls("apps.connections.open")] == [fake_slack.app_token] * 4

