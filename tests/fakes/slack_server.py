"""A local fake Slack (Web API over HTTP + Socket Mode WebSocket) for driving the real slack_sdk in tests."""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from types import TracebackType
from typing import Any

import pytest
from slack_sdk.signature import SignatureVerifier

from tests.fakes.http import serve
from tests.fakes.slack_methods import Grant, OAuthCode, RateLimit, SlackCall, SlackStream, Workspace
from tests.fakes.slack_socket import DropMode, EnvelopeType, SocketModeServer
from tests.fakes.slack_web import STREAMING_UNAVAILABLE, SlackWebState

__all__ = ["STREAMING_UNAVAILABLE", "FakeSlack", "SlackCall", "SlackStream", "signed_headers"]

DEFAULT_SCOPE = "app_mentions:read,channels:history,channels:read,chat:write,groups:history,im:history,reactions:read"


def signed_headers(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """The two headers Slack signs a request with (v0, HMAC-SHA256 over `v0:{timestamp}:{body}`)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    assert signature is not None  # None only for a missing timestamp or body
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


class FakeSlack:
    """`with FakeSlack() as slack:` one workspace with a bot, an app-level token and an OAuth app, on 127.0.0.1."""

    def __init__(self, *, team_id: str = "T0FAKETEAM", team_name: str = "Fake Workspace",
                 domain: str = "fake-workspace", app_id: str = "A0FAKEAPP", bot_user_id: str = "U0FAKEBOT",
                 bot_id: str = "B0FAKEBOT", bot_token: str = "xoxb-fake-bot-token",
                 app_token: str = "xapp-1-A0FAKEAPP-fake-app-token", client_id: str = "1111.2222",
                 client_secret: str = "fake-client-secret", signing_secret: str = "fake-signing-secret") -> None:
        self.team_id, self.team_name, self.app_id = team_id, team_name, app_id
        self.bot_user_id, self.bot_id = bot_user_id, bot_id
        self.bot_token, self.app_token = bot_token, app_token
        self.client_id, self.client_secret, self.signing_secret = client_id, client_secret, signing_secret
        self.web = SlackWebState(app_id=app_id, workspace=Workspace(team_id, team_name, domain, bot_user_id, bot_id))
        self.web.grants[bot_token] = Grant(bot_token, "bot", team_id, DEFAULT_SCOPE)
        self.web.grants[app_token] = Grant(app_token, "app", team_id, "connections:write")
        self.web.oauth_clients[client_id] = client_secret
        self.socket = SocketModeServer(app_id)
        self.web.socket_url = self.socket.issue_url
        self.base_url = ""
        self._stack = ExitStack()
        self._event_seq = 0

    def __enter__(self) -> FakeSlack:
        self.base_url = self._stack.enter_context(serve(self.web.route))
        self.socket.start()
        self._stack.callback(self.socket.stop)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stack.close()

    @property
    def api_url(self) -> str:
        """What WebClient(base_url=…) takes: http://127.0.0.1:PORT/api/."""
        return f"{self.base_url}/api/"

    # --- the workspace ---------------------------------------------------------------------------------------

    def add_channel(self, channel_id: str, name: str, *, is_private: bool = False, is_member: bool = True,
                    is_archived: bool = False) -> None:
        """A channel conversations.info / users.conversations know (D… is a DM; G… or is_private a private one)."""
        is_im = channel_id.startswith("D")
        is_private = is_private or channel_id.startswith("G")
        info = {"id": channel_id, "name": name, "is_channel": not is_im and not is_private, "is_group": is_private,
                "is_im": is_im, "is_private": is_private or is_im, "is_member": is_member,
                "is_archived": is_archived, "context_team_id": self.team_id}
        with self.web.cond:
            self.web.channels[channel_id] = info

    def add_user(self, user_id: str, name: str, *, is_bot: bool = False) -> None:
        info = {"id": user_id, "team_id": self.team_id, "name": name, "real_name": name, "is_bot": is_bot,
                "deleted": False, "profile": {"display_name": name, "real_name": name}}
        with self.web.cond:
            self.web.users[user_id] = info

    def add_workspace(self, team_id: str, name: str, *, domain: str | None = None,
                      bot_user_id: str | None = None) -> None:
        """Another workspace the app can be installed in (through issue_oauth_code)."""
        ws = Workspace(team_id, name, domain or team_id.lower(), bot_user_id or f"U{team_id}BOT", f"B{team_id}")
        with self.web.cond:
            self.web.workspaces[team_id] = ws

    def add_bot_token(self, token: str, *, team_id: str | None = None) -> None:
        with self.web.cond:
            self.web.grants[token] = Grant(token, "bot", team_id or self.team_id, DEFAULT_SCOPE)

    def issue_oauth_code(self, *, team_id: str | None = None, scope: str = DEFAULT_SCOPE,
                         redirect_uri: str | None = None, installer: str = "U0INSTALLER",
                         client_id: str | None = None) -> str:
        """What Slack puts in `?code=` after a user approves the install; good for one oauth.v2.access."""
        code = f"fake-code-{uuid.uuid4().hex}"
        grant = OAuthCode(team_id or self.team_id, scope, client_id or self.client_id, redirect_uri, installer)
        with self.web.cond:
            self.web.oauth_codes[code] = grant
        return code

    # --- knobs ---------------------------------------------------------------------------------------------

    def revoke_token(self, token: str) -> None:
        """As if revoked at Slack (uninstall, rotation): every later call with it answers `token_revoked`."""
        with self.web.cond:
            self.web.revoked.add(token)

    def disable_streaming(self, error: str = STREAMING_UNAVAILABLE) -> None:
        """chat.startStream/appendStream/stopStream answer `ok: false` with `error` until enable_streaming()."""
        with self.web.cond:
            self.web.streaming_error = error

    def enable_streaming(self) -> None:
        with self.web.cond:
            self.web.streaming_error = None

    def rate_limit(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of `method` get HTTP 429 with `Retry-After: retry_after`."""
        with self.web.cond:
            self.web.rate_limits[method] = RateLimit(times, retry_after)

    # --- what the bot did ------------------------------------------------------------------------------------

    def calls(self, method: str | None = None) -> list[SlackCall]:
        return self.web.calls_of(method)

    def wait_for(self, method: str, predicate: Any = None, timeout: float = 10, count: int = 1) -> SlackCall:
        """Wait until the count-th call of `method` for which predicate(call) holds; returns it."""
        return self.web.wait_for(method, predicate, timeout, count)

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The parent message and its replies, oldest first, as they stand now (updates and streams applied)."""
        return self.web.thread(channel, ts)

    def messages(self, channel: str) -> list[dict[str, Any]]:
        with self.web.cond:
            return copy.deepcopy(self.web.messages.get(channel, []))

    def ephemerals(self, channel: str | None = None) -> list[dict[str, Any]]:
        with self.web.cond:
            return [copy.deepcopy(m) for m in self.web.ephemerals if channel is None or m["channel"] == channel]

    def streams(self) -> list[SlackStream]:
        with self.web.cond:
            return copy.deepcopy(list(self.web.streams.values()))

    def stream(self, channel: str, ts: str) -> SlackStream:
        with self.web.cond:
            return copy.deepcopy(self.web.streams[(channel, ts)])

    # --- what users do -------------------------------------------------------------------------------------

    def user_message(self, channel: str, text: str, *, user: str = "U0HUMAN", thread_ts: str | None = None,
                     mention: bool = False) -> dict[str, Any]:
        """A person posts in the channel: stored (so thread() shows it) and returned as Slack's event."""
        if mention and f"<@{self.bot_user_id}>" not in text:
            text = f"<@{self.bot_user_id}> {text}"
        with self.web.cond:
            ts = self.web.next_ts()
            event: dict[str, Any] = {"type": "app_mention" if mention else "message", "user": user, "text": text,
                                     "ts": ts, "channel": channel, "event_ts": ts, "team": self.team_id,
                                     "client_msg_id": str(uuid.uuid4())}
            if not mention:
                event["channel_type"] = "im" if channel.startswith("D") else "channel"
            if thread_ts:
                event["thread_ts"] = thread_ts
            self.web.store(channel, {**copy.deepcopy(event), "type": "message"})
        return event

    def event_callback(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        """The Events API payload wrapping `event` (what the HTTP endpoint gets and Socket Mode's payload)."""
        with self.web.cond:
            self._event_seq += 1
            seq = self._event_seq
        return {"token": "fake-verification-token", "team_id": self.team_id, "api_app_id": self.app_id,
                "event": event, "type": "event_callback", "event_id": event_id or f"Ev0FAKE{seq:06d}",
                "event_time": int(time.time()), "event_context": f"4-fake-{seq}",
                "is_ext_shared_channel": False,
                "authorizations": [{"enterprise_id": None, "team_id": self.team_id, "user_id": self.bot_user_id,
                                    "is_bot": True, "is_enterprise_install": False}]}

    def signed_headers(self, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        return signed_headers(body, self.signing_secret, timestamp)

    # --- Socket Mode -----------------------------------------------------------------------------------------

    def push(self, payload: dict[str, Any], type: EnvelopeType = "events_api", **envelope: Any) -> str:  # noqa: A002
        """Send an envelope to the connected Socket Mode client; its envelope_id (see SocketModeServer.push)."""
        return self.socket.push(payload, type, **envelope)

    def wait_ack(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        return self.socket.wait_ack(envelope_id, timeout)

    def wait_connected(self, n: int = 1, timeout: float = 10) -> None:
        self.socket.wait_connected(n, timeout)

    def drop_connections(self, how: DropMode = "fin") -> int:
        return self.socket.drop_connections(how)

    def send_disconnect(self, reason: str = "refresh_requested") -> int:
        return self.socket.send_disconnect(reason)


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A fresh fake Slack per test (two servers on random ports; starting them takes milliseconds)."""
    with FakeSlack() as slack:
        yield slack
