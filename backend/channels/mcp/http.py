"""The MCP endpoint in the ASGI app: /mcp/ goes to the SDK's streamable HTTP transport behind our API-key check.

The transport is stateless (every POST is a whole exchange): the web tier runs several worker processes
and, behind nginx, several containers, so an MCP session held in one process's memory would break. A
conversation still continues: `ask` returns a session_id that lives in the database.
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from backend.channels.errors import error_body, error_headers
from backend.channels.mcp.auth import HEADER, Caller, key_caller
from backend.channels.mcp.server import build_server
from backend.core.db import release_connections
from backend.core.errors import AppError, RequestError

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

    It also runs the SDK's session manager for the length of the ASGI lifespan, as the SDK requires
    (its task group serves every request). A fresh server per lifespan: a manager runs only once.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self._manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
        elif scope["type"] == "http" and is_mcp_path(scope["path"]):
            await self._serve(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _lifespan(self, scope: Any, receive: Any, send: Any) -> None:
        server = build_server(_caller_of)
        # Host checks are Django's ALLOWED_HOSTS (in _authenticate), not the SDK's loopback-only default.
        server.streamable_http_app(stateless_http=True, transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=False))
        manager = server.session_manager
        async with manager.run():
            self._manager = manager
            try:
                await self.app(scope, receive, send)
            finally:
                self._manager = None

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        manager = self._manager
        if manager is None:
            await _refuse(RequestError(503, "unavailable", "The MCP endpoint starts with the server's ASGI "
                                       "lifespan, which is not running (uvicorn --lifespan off?)."), send)
            return
        try:
            caller = await sync_to_async(_authenticate, thread_sensitive=False)(scope)
        except AppError as exc:
            await _refuse(exc, send)
            return
        await manager.handle_request({**scope, _CALLER: caller}, receive, send)
