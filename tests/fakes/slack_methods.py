"""The fake Slack's Web API methods: each takes the request's arguments and answers Slack's fields or error names."""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.slack_web import SlackWebState


class SlackApiFailure(Exception):
    """Answered as `{"ok": false, "error": <error>}`."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass(frozen=True)
class Workspace:
    team_id: str
    name: str
    domain: str
    bot_user_id: str
    bot_id: str


@dataclass(frozen=True)
class Grant:
    """What a token stands for: a bot token (xoxb-) of one workspace, or the app-level token (xapp-)."""

    token: str
    kind: str  # "bot" | "app"
    team_id: str
    scope: str = ""


@dataclass(frozen=True)
class SlackCall:
    """One request as the fake received it (params with JSON strings decoded) and what it answered."""

    method: str
    params: dict[str, Any]
    token: str | None
    status: int
    response: dict[str, Any]


@dataclass
class SlackStream:
    """A message being streamed: the chunks in order (markdown_text folded in as chunks) and the text so far."""

    channel: str
    ts: str
    thread_ts: str
    start: dict[str, Any]
    chunks: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    blocks: list[Any] | None = None
    state: str = "in_progress"  # "completed" after chat.stopStream


@dataclass(frozen=True)
class OAuthCode:
    team_id: str
    scope: str
    client_id: str
    redirect_uri: str | None
    installer: str


@dataclass
class RateLimit:
    remaining: int
    retry_after: int


def new_bot_token(team_id: str) -> str:
    return f"xoxb-{team_id}-{secrets.token_hex(12)}"


Handler = Callable[["SlackWebState", dict[str, Any], Grant | None], dict[str, Any]]
METHODS: dict[str, Handler] = {}


def method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name] = handler
        return handler

    return register


def _required(params: dict[str, Any], name: str, error: str = "invalid_arguments") -> str:
    value = params.get(name)
    if not value:
        raise SlackApiFailure(error)
    return str(value)


def _bot(grant: Grant | None) -> Grant:
    assert grant is not None  # every method but oauth.v2.access is authorized before it runs
    return grant


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true")


# --- identity ----------------------------------------------------------------------------------------------

@method("auth.test")
def auth_test(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    ws = state.workspace(_bot(grant).team_id)
    return {"url": f"https://{ws.domain}.slack.com/", "team": ws.name, "user": "openguru", "team_id": ws.team_id,
            "user_id": ws.bot_user_id, "bot_id": ws.bot_id, "is_enterprise_install": False}


@method("auth.revoke")
def auth_revoke(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    if _truthy(params.get("test")):
        return {"revoked": False}
    state.revoked.add(_bot(grant).token)
    return {"revoked": True}


@method("team.info")
def team_info(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    ws = state.workspaces.get(str(params.get("team") or _bot(grant).team_id))
    if ws is None:
        raise SlackApiFailure("team_not_found")
    return {"team": {"id": ws.team_id, "name": ws.name, "domain": ws.domain, "email_domain": "",
                     "url": f"https://{ws.domain}.slack.com/", "icon": {"image_default": True}}}


def _lookup(table: dict[str, dict[str, Any]], params: dict[str, Any], name: str, error: str) -> dict[str, Any]:
    found = table.get(_required(params, name, error))
    if found is None:
        raise SlackApiFailure(error)
    return {name: copy.deepcopy(found)}


@method("conversations.info")
def conversations_info(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    return _lookup(state.channels, params, "channel", "channel_not_found")


@method("users.conversations")
def users_conversations(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    """The conversations the bot is a member of, of the asked `types`, paged by `cursor` / `limit`."""
    types = str(params.get("types") or "public_channel").split(",")

    def kind(channel: dict[str, Any]) -> str:
        return "im" if channel["is_im"] else "private_channel" if channel["is_private"] else "public_channel"

    joined = [c for c in state.channels.values() if c["is_member"] and kind(c) in types
              and not (_truthy(params.get("exclude_archived")) and c["is_archived"])]
    start, limit = int(params.get("cursor") or 0), int(params.get("limit") or 100)
    following = str(start + limit) if start + limit < len(joined) else ""
    return {"channels": copy.deepcopy(joined[start:start + limit]), "response_metadata": {"next_cursor": following}}


@method("users.info")
def users_info(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    return _lookup(state.users, params, "user", "user_not_found")


# --- messages ----------------------------------------------------------------------------------------------

def _bot_message(state: SlackWebState, grant: Grant, params: dict[str, Any], channel: str) -> dict[str, Any]:
    ws = state.workspace(grant.team_id)
    message: dict[str, Any] = {"type": "message", "ts": state.next_ts(), "channel": channel,
                               "text": str(params.get("text") or ""), "user": ws.bot_user_id, "bot_id": ws.bot_id,
                               "app_id": state.app_id, "team": ws.team_id}
    for name in ("blocks", "attachments", "metadata", "thread_ts"):
        if params.get(name):
            message[name] = copy.deepcopy(params[name])
    return message


def _has_content(params: dict[str, Any]) -> bool:
    return bool(params.get("text") or params.get("blocks") or params.get("attachments"))


def _public(message: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in message.items() if k != "channel"}


@method("chat.postMessage")
def chat_post_message(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    channel = _required(params, "channel", "channel_not_found")
    if not _has_content(params):
        raise SlackApiFailure("no_text")
    message = state.store(channel, _bot_message(state, _bot(grant), params, channel))
    return {"channel": channel, "ts": message["ts"], "message": _public(message)}


@method("chat.update")
def chat_update(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    channel = _required(params, "channel", "channel_not_found")
    message = state.find(channel, _required(params, "ts", "message_not_found"))
    ws = state.workspace(_bot(grant).team_id)
    if message.get("user") != ws.bot_user_id:
        raise SlackApiFailure("cant_update_message")
    if not _has_content(params):
        raise SlackApiFailure("no_text")
    for name in ("text", "blocks", "attachments", "metadata"):
        if name in params:
            message[name] = copy.deepcopy(params[name])
    message["edited"] = {"user": ws.bot_user_id, "ts": state.next_ts()}
    return {"channel": channel, "ts": message["ts"], "text": message.get("text", ""), "message": _public(message)}


@method("chat.postEphemeral")
def chat_post_ephemeral(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    channel = _required(params, "channel", "channel_not_found")
    user = _required(params, "user", "user_not_in_channel")
    if not _has_content(params):
        raise SlackApiFailure("no_text")
    message = _bot_message(state, _bot(grant), params, channel)
    message["ephemeral_to"] = user
    state.ephemerals.append(message)
    return {"message_ts": message["ts"]}


# --- streaming ---------------------------------------------------------------------------------------------

def _chunks_of(params: dict[str, Any]) -> list[dict[str, Any]]:
    """markdown_text and chunks as one list of chunks, the way Slack renders them."""
    chunks = [{"type": "markdown_text", "text": params["markdown_text"]}] if params.get("markdown_text") else []
    return chunks + [copy.deepcopy(c) for c in params.get("chunks") or []]


def _feed(state: SlackWebState, stream: SlackStream, chunks: list[dict[str, Any]]) -> None:
    stream.chunks.extend(chunks)
    stream.text += "".join(str(c.get("text", "")) for c in chunks if c.get("type") == "markdown_text")
    state.find(stream.channel, stream.ts)["text"] = stream.text


def _live_stream(state: SlackWebState, params: dict[str, Any]) -> SlackStream:
    channel = _required(params, "channel", "channel_not_found")
    ts = _required(params, "ts", "message_not_found")
    state.find(channel, ts)
    stream = state.streams.get((channel, ts))
    if stream is None or stream.state != "in_progress":
        raise SlackApiFailure("message_not_in_streaming_state")
    return stream


@method("chat.startStream")
def chat_start_stream(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    channel = _required(params, "channel", "channel_not_found")
    thread_ts = _required(params, "thread_ts")
    # "Required when streaming to channels" (Slack's chat.startStream reference); DMs (D…) go without.
    if not channel.startswith("D"):
        _required(params, "recipient_team_id", "missing_recipient_team_id")
        _required(params, "recipient_user_id", "missing_recipient_user_id")
    message = state.store(channel, _bot_message(state, _bot(grant), {"thread_ts": thread_ts}, channel))
    stream = SlackStream(channel=channel, ts=message["ts"], thread_ts=thread_ts, start=copy.deepcopy(params))
    state.streams[(channel, stream.ts)] = stream
    _feed(state, stream, _chunks_of(params))
    return {"channel": channel, "ts": stream.ts}


@method("chat.appendStream")
def chat_append_stream(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    stream = _live_stream(state, params)
    chunks = _chunks_of(params)
    if not chunks:
        raise SlackApiFailure("no_text")
    _feed(state, stream, chunks)
    return {"channel": stream.channel, "ts": stream.ts}


@method("chat.stopStream")
def chat_stop_stream(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    stream = _live_stream(state, params)
    _feed(state, stream, _chunks_of(params))
    stream.state = "completed"
    message = state.find(stream.channel, stream.ts)
    if params.get("blocks"):
        stream.blocks = copy.deepcopy(params["blocks"])
        message["blocks"] = copy.deepcopy(params["blocks"])
    if params.get("metadata"):
        message["metadata"] = copy.deepcopy(params["metadata"])
    return {"channel": stream.channel, "ts": stream.ts, "message": _public(message)}


# --- installation --------------------------------------------------------------------------------------------

@method("oauth.v2.access")
def oauth_v2_access(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    client_id = str(params.get("client_id") or "")
    if client_id not in state.oauth_clients:
        raise SlackApiFailure("invalid_client_id")
    if params.get("client_secret") != state.oauth_clients[client_id]:
        raise SlackApiFailure("bad_client_secret")
    code = state.oauth_codes.get(str(params.get("code") or ""))
    if code is None or code.client_id != client_id:
        raise SlackApiFailure("invalid_code")
    if code.redirect_uri is not None and params.get("redirect_uri") not in (None, code.redirect_uri):
        raise SlackApiFailure("bad_redirect_uri")
    del state.oauth_codes[str(params["code"])]  # a code is good for one exchange
    ws = state.workspace(code.team_id)
    token = new_bot_token(ws.team_id)
    state.grants[token] = Grant(token=token, kind="bot", team_id=ws.team_id, scope=code.scope)
    return {"access_token": token, "token_type": "bot", "scope": code.scope, "bot_user_id": ws.bot_user_id,
            "app_id": state.app_id, "team": {"id": ws.team_id, "name": ws.name}, "enterprise": None,
            "authed_user": {"id": code.installer}, "is_enterprise_install": False}


@method("apps.connections.open")
def apps_connections_open(state: SlackWebState, params: dict[str, Any], grant: Grant | None) -> dict[str, Any]:
    return {"url": state.socket_url()}
