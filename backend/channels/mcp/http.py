"""The MCP endpoint in the ASGI app: /mcp/ goes to the SDK's streamable HTTP transport behind our API-key check.

The transport is stateless (every POST is a whole exchange): the web tier runs several worker processes
and, behind nginx, several containers, so an MCP session held in one process's memory would break. A
conversation still continues: `ask` returns a session_id that lives in the database.

The SDK is imported and its session manager started on the first /mcp request, not at start-up: it costs
each web process about half a second of CPU, which most processes never need.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest

from backend.channels.errors import error_body, error_headers
from backend.channels.mcp.auth import HEADER, Caller, key_caller
from backend.core.db import release_connections
from backend.core.errors import AppError, RequestError

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

logger = logging.getLogger(__name__)

PREFIX = "/mcp"
_CALLER = "openguru.mcp.caller"  # the scope key the authenticated Caller travels under to the tools


def is_mcp_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _caller_of(ctx: Context) -> Caller:
    request = ctx.request_context.request
    caller = getattr(request, "scope", {}).get(_CALLER)
    if not isinstance(caller, Caller):  # only reachable if a request bypassed McpMount._serve
        raise RequestError(401, "unauthenticated", f"Send an API key in the {HEADER} header.")
    return caller


def _authenticate(scope: dict[str, Any]) -> Caller:
    """The request's caller (Django's ALLOWED_HOSTS decides which Host our absolute links may carry)."""
    request = ASGIRequest(scope, io.BytesIO())
    try:
        request.get_host()
    except DisallowedHost as exc:
        raise RequestError(400, "bad_request", "This host name is not served here.") from exc
    try:
        return key_caller(request.headers.get(HEADER, ""), request)
    finally:
        release_connections()


async def _refuse(exc: AppError, send: Any) -> None:
    body = json.dumps(error_body(exc)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in error_headers(exc).items()]
    if exc.status == 401:
        headers.append((b"www-authenticate", HEADER.encode()))  # as the REST API names its scheme
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpMount:
    """Routes /mcp and /mcp/… to the MCP transport and everything else to `app`.

    The SDK's session manager (its task group serves every request) runs in a task of its own from the first
    /mcp request until the ASGI lifespan shuts down; without a lifespan, /mcp answers 503.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self._serving = False
        self._manager: StreamableHTTPSessionManager | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._starting: asyncio.Lock | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
        elif scope["type"] == "http" and is_mcp_path(scope["path"]):
            await self._serve(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _lifespan(self, scope: Any, receive: Any, send: Any) -> None:
        async def receive_and_stop() -> Any:
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                await self._stop_manager()  # before the app says it has shut down
            return message

        self._serving = True
        try:
            await self.app(scope, receive_and_stop, send)
        finally:
            self._serving = False
            await self._stop_manager()

    async def _started(self) -> StreamableHTTPSessionManager | None:
        if self._manager is None and self._serving:
            self._starting = self._starting or asyncio.Lock()
            async with self._starting:
                if self._manager is None and self._task is None:
                    # Here, not at the top: the SDK costs every web process ~0.5 s of CPU at start-up.
                    from backend.channels.mcp import server
                    ready, self._stop = asyncio.Event(), asyncio.Event()
                    self._task = asyncio.create_task(self._run(server.http_session_manager(_caller_of), ready))
                    await ready.wait()
        return self._manager

    async def _run(self, manager: StreamableHTTPSessionManager, ready: asyncio.Event) -> None:
        try:
            async with manager.run():
                self._manager = manager
                ready.set()
                assert self._stop is not None
                await self._stop.wait()
        finally:
            self._manager = None
            ready.set()  # a manager that failed to start must not leave the first request waiting

    async def _stop_manager(self) -> None:
        task, self._task = self._task, None
        if task is not None and self._stop is not None:
            self._stop.set()
            await task

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        manager = await self._started()
        if manager is None:
            await _refuse(RequestError(503, "unavailable", "The MCP endpoint runs with the server's ASGI "
                                       "lifespan, which is not running (uvicorn --lifespan off?)."), send)
            return
        try:
            caller = await sync_to_async(_authenticate, thread_sensitive=False)(scope)
        except AppError as exc:
            await _refuse(exc, send)
            return
        await manager.handle_request({**scope, _CALLER: caller}, receive, send)
