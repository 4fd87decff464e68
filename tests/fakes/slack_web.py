"""Fake Slack Web API state: workspaces, tokens, OAuth codes, messages, streams and the log of every call."""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.http import FakeRequest, FakeResponder
from tests.fakes.slack_methods import (
    METHODS,
    Grant,
    OAuthCode,
    RateLimit,
    SlackApiFailure,
    SlackCall,
    SlackStream,
    Workspace,
)

# What chat.startStream / appendStream answer where streaming is not available: Slack documents
# `channel_type_not_supported` ("Channel type not supported") for both methods, and it is the error bots in the
# wild fall back to chat.postMessage + chat.update on.
STREAMING_UNAVAILABLE = "channel_type_not_supported"
# Arguments Slack takes as JSON text when a request is form-encoded (the SDK sends some of them that way).
_JSON_FIELDS = ("blocks", "chunks", "attachments", "metadata")
_STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


class SlackWebState:
    """Everything the Web API knows; one Condition guards it so tests can wait on calls from any thread."""

    def __init__(self, *, app_id: str, workspace: Workspace) -> None:
        self.cond = threading.Condition()
        self.app_id = app_id
        self.default_team = workspace.team_id
        self.workspaces: dict[str, Workspace] = {workspace.team_id: workspace}
        self.grants: dict[str, Grant] = {}
        self.revoked: set[str] = set()
        self.oauth_clients: dict[str, str] = {}
        self.oauth_codes: dict[str, OAuthCode] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.ephemerals: list[dict[str, Any]] = []
        self.streams: dict[tuple[str, str], SlackStream] = {}
        self.calls: list[SlackCall] = []
        self.rate_limits: dict[str, RateLimit] = {}
        self.streaming_error: str | None = None
        self.socket_url: Callable[[], str] = lambda: ""
        self._last_ts = 0

    # --- ids ---------------------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """Slack message ts: seconds.micros, strictly increasing within this fake."""
        self._last_ts = max(self._last_ts + 1, time.time_ns() // 1000)
        return f"{self._last_ts // 1_000_000}.{self._last_ts % 1_000_000:06d}"

    def workspace(self, team_id: str) -> Workspace:
        return self.workspaces[team_id]

    # --- messages ------------------------------------------------------------------------------------------

    def store(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        self.messages.setdefault(channel, []).append(message)
        return message

    def find(self, channel: str, ts: str) -> dict[str, Any]:
        for message in self.messages.get(channel, []):
            if message["ts"] == ts:
                return message
        raise SlackApiFailure("message_not_found")

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        with self.cond:
            found = [m for m in self.messages.get(channel, []) if m["ts"] == ts or m.get("thread_ts") == ts]
            return copy.deepcopy(sorted(found, key=lambda m: float(m["ts"])))

    # --- HTTP ----------------------------------------------------------------------------------------------

    def route(self, request: FakeRequest, respond: FakeResponder) -> None:
        parts = urlsplit(request.path)
        if not parts.path.startswith("/api/"):
            respond.json({"ok": False, "error": "unknown_method"}, status=404)
            return
        method = parts.path[len("/api/"):]
        params = _decode_params(request, parts.query)
        token = _bearer(request.headers) or params.pop("token", None)
        _merge_basic_auth(request.headers, params)
        status, body, headers = self.dispatch(method, params, token)
        respond.json(body, status=status, headers=headers)

    def dispatch(self, method: str, params: dict[str, Any], token: str | None) -> tuple[int, dict[str, Any],
                                                                                           dict[str, str]]:
        with self.cond:
            status, headers = 200, {}
            limit = self.rate_limits.get(method)
            if limit is not None and limit.remaining > 0:
                limit.remaining -= 1
                status, headers = 429, {"Retry-After": str(limit.retry_after)}
                body: dict[str, Any] = {"ok": False, "error": "ratelimited"}
            else:
                body = self._answer(method, params, token)
            self.calls.append(SlackCall(method, copy.deepcopy(params), token, status, copy.deepcopy(body)))
            self.cond.notify_all()
            return status, body, headers

    def _answer(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        handler = METHODS.get(method)
        if handler is None:
            return {"ok": False, "error": "unknown_method", "req_method": method}
        try:
            grant = None if method == "oauth.v2.access" else self._authorize(method, token)
            if method in _STREAM_METHODS and self.streaming_error:
                raise SlackApiFailure(self.streaming_error)
            return {"ok": True, **handler(self, params, grant)}
        except SlackApiFailure as failure:
            return {"ok": False, "error": failure.error}

    def _authorize(self, method: str, token: str | None) -> Grant:
        if not token:
            raise SlackApiFailure("not_authed")
        if token in self.revoked:
            raise SlackApiFailure("token_revoked")
        grant = self.grants.get(token)
        if grant is None:
            raise SlackApiFailure("invalid_auth")
        wanted = "app" if method == "apps.connections.open" else "bot"
        if grant.kind != wanted:
            raise SlackApiFailure("not_allowed_token_type")
        return grant

    # --- calls -------------------------------------------------------------------------------------------

    def calls_of(self, method: str | None = None) -> list[SlackCall]:
        with self.cond:
            return [c for c in self.calls if method is None or c.method == method]

    def wait_for(self, method: str, predicate: Callable[[SlackCall], bool] | None = None, timeout: float = 10,
                 count: int = 1) -> SlackCall:
        """The count-th call of `method` matching `predicate` (past calls count too), waiting for it."""

        def matches() -> list[SlackCall]:
            return [c for c in self.calls if c.method == method and (predicate is None or predicate(c))]

        with self.cond:
            if not self.cond.wait_for(lambda: len(matches()) >= count, timeout=timeout):
                seen = [c.method for c in self.calls]
                raise TimeoutError(f"no {count}× {method} matching within {timeout} s; calls so far: {seen}")
            return matches()[count - 1]


def _decode_params(request: FakeRequest, query: str) -> dict[str, Any]:
    """Query string, then a form or JSON body, the way Slack reads its arguments."""
    params: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    content_type = request.headers.get("content-type", "")
    if request.body and content_type.startswith("application/json"):
        params.update(json.loads(request.body))
    elif request.body:
        params.update(parse_qsl(request.body.decode(), keep_blank_values=True))
    for name in _JSON_FIELDS:
        value = params.get(name)
        if isinstance(value, str) and value[:1] in ("[", "{"):
            params[name] = json.loads(value)
    return params


def _bearer(headers: dict[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def _merge_basic_auth(headers: dict[str, str], params: dict[str, Any]) -> None:
    """oauth.v2.access takes the client id/secret as HTTP Basic auth (what the SDK sends) or as form fields."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return
    client_id, _, client_secret = base64.b64decode(value).decode().partition(":")
    params.setdefault("client_id", client_id)
    params.setdefault("client_secret", client_secret)

