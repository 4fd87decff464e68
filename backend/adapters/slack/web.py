"""The Slack Web API calls the bot makes, through slack_sdk's WebClient, with Slack's errors made ours."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler
from slack_sdk.models.messages.chunk import TaskUpdateChunk
from slack_sdk.web.chat_stream import ChatStream

TIMEOUT_S = 10  # Slack answers in well under a second; a hung call must not hold a worker
STREAM_BUFFER = 120  # characters gathered before an appendStream call: smooth to read, few calls per answer


class SlackError(Exception):
    """A Slack call that failed: `code` is Slack's error name ("invalid_auth", "channel_not_found"…)."""

    def __init__(self, code: str, method: str = "") -> None:
        super().__init__(f"Slack refused {method or 'the call'}: {code}")
        self.code = code
        self.method = method


@dataclass(frozen=True)
class BotIdentity:
    team_id: str
    team_name: str
    bot_user_id: str
    url: str


@dataclass(frozen=True)
class Installation:
    """What Slack's OAuth exchange gives back for one workspace."""

    access_token: str
    team_id: str
    team_name: str
    bot_user_id: str
    app_id: str


@dataclass(frozen=True)
class SlackChannel:
    id: str
    name: str
    private: bool


def _error(exc: SlackClientError | OSError, method: str) -> SlackError:
    if isinstance(exc, SlackApiError):
        return SlackError(str(exc.response.get("error") or exc.response.status_code), method)
    if isinstance(exc, OSError):  # Slack unreachable: urllib's URLError, a timeout, a refused connection
        return SlackError("connection_failed", method)
    return SlackError(type(exc).__name__, method)


class SlackStream:
    """A streamed message: a task line (the status), markdown text appended, then stopped with blocks."""

    def __init__(self, stream: ChatStream) -> None:
        self._stream = stream

    @property
    def ts(self) -> str:
        return self._stream.ts or ""

    def _run(self, method: str, **params: Any) -> None:
        try:
            getattr(self._stream, method)(**params)
        except (SlackClientError, OSError) as exc:
            raise _error(exc, f"chat.{method}Stream") from exc

    def task(self, *, task_id: str, title: str, status: str, output: str | None = None) -> None:
        """Show (or finish) one step as Slack's task timeline: "pending", "in_progress", "complete", "error"."""
        chunk = TaskUpdateChunk(id=task_id, title=title, status=status, output=output)
        self._run("append", chunks=[chunk])

    def append(self, text: str) -> None:
        self._run("append", markdown_text=text)

    def stop(self, *, blocks: list[dict[str, Any]] | None = None, text: str | None = None) -> None:
        self._run("stop", blocks=blocks, markdown_text=text)


class SlackWeb:
    """One bot token's view of the Web API. Rate limits (429) and dropped connections are retried by the SDK."""

    def __init__(self, token: str, *, base_url: str) -> None:
        handlers = [RateLimitErrorRetryHandler(max_retry_count=2), ConnectionErrorRetryHandler(max_retry_count=2)]
        self.client = WebClient(token=token or None, base_url=base_url, timeout=TIMEOUT_S, retry_handlers=handlers)

    def _call(self, method: str, **params: Any) -> dict[str, Any]:
        # The SDK's own method sends each call the way Slack wants it (JSON, form, or basic auth for OAuth).
        call = getattr(self.client, method.replace(".", "_"))
        try:
            response = call(**{k: v for k, v in params.items() if v is not None})
        except (SlackClientError, OSError) as exc:
            raise _error(exc, method) from exc
        return dict(response.data) if isinstance(response.data, dict) else {}

    def identity(self) -> BotIdentity:
        data = self._call("auth.test")
        return BotIdentity(str(data.get("team_id", "")), str(data.get("team", "")), str(data.get("user_id", "")),
                           str(data.get("url", "")))

    def post(self, *, channel: str, thread_ts: str | None, text: str, blocks: list[dict[str, Any]] | None = None,
             ) -> str:
        data = self._call("chat.postMessage", channel=channel, thread_ts=thread_ts, text=text, blocks=blocks,
                          unfurl_links=False, unfurl_media=False)
        return str(data.get("ts", ""))

    def update(self, *, channel: str, ts: str, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        self._call("chat.update", channel=channel, ts=ts, text=text, blocks=blocks)

    def ephemeral(self, *, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
        self._call("chat.postEphemeral", channel=channel, user=user, text=text, thread_ts=thread_ts)

    def stream(self, *, channel: str, thread_ts: str, team_id: str, user_id: str) -> SlackStream:
        """One natively streamed message (chat.startStream / appendStream / stopStream via the SDK's helper)."""
        return SlackStream(self.client.chat_stream(channel=channel, thread_ts=thread_ts, recipient_team_id=team_id,
                                                   recipient_user_id=user_id, task_display_mode="timeline",
                                                   buffer_size=STREAM_BUFFER))

    def channel_name(self, channel: str) -> str:
        data = self._call("conversations.info", channel=channel)
        info = data.get("channel") or {}
        return str(info.get("name") or "") if isinstance(info, dict) else ""

    def bot_channels(self, *, limit: int = 1000) -> list[SlackChannel]:
        """The public and private channels the bot is a member of (where it can be allowed to answer)."""
        return list(self._pages(limit))

    def _pages(self, limit: int) -> Iterator[SlackChannel]:
        cursor, seen = None, 0
        while seen < limit:
            data = self._call("users.conversations", types="public_channel,private_channel", limit=200,
                              cursor=cursor, exclude_archived=True)
            for item in data.get("channels") or []:
                seen += 1
                yield SlackChannel(str(item.get("id", "")), str(item.get("name", "")), bool(item.get("is_private")))
            cursor = (data.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return

    def app_connection_url(self, app_token: str) -> str:
        """A Socket Mode WebSocket URL for this app-level token (xapp-…): proves the token works."""
        return str(self._call("apps.connections.open", app_token=app_token).get("url", ""))

    def revoke(self) -> None:
        self._call("auth.revoke")

    def exchange_code(self, *, client_id: str, client_secret: str, code: str, redirect_uri: str) -> Installation:
        data = self._call("oauth.v2.access", client_id=client_id, client_secret=client_secret, code=code,
                          redirect_uri=redirect_uri)
        team = data.get("team") or {}
        return Installation(str(data.get("access_token", "")), str(team.get("id", "")), str(team.get("name", "")),
                            str(data.get("bot_user_id", "")), str(data.get("app_id", "")))
