"""ASGI entry point (uvicorn); streaming views use async generators under it.

uvicorn runs with --no-proxy-headers everywhere (launcher, Dockerfile, compose): the one place that
decides whom to believe about the client's address is TrustedProxies below, from our settings.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from backend.core.metrics_asgi import MetricsLifespan

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.config.settings.base")


class TrustedProxies:
    """uvicorn's ProxyHeadersMiddleware, trusting exactly settings.OPENGURU_TRUSTED_PROXIES.

    Only when the TCP peer is one of them do X-Forwarded-For (its right-most untrusted hop) and
    X-Forwarded-Proto replace the peer's address and scheme; a header from anyone else is ignored.
    The setting is read per request, so overridden settings (tests) apply.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self._by_proxies: dict[tuple[str, ...], ProxyHeadersMiddleware] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        proxies = tuple(settings.OPENGURU_TRUSTED_PROXIES)
        middleware = self._by_proxies.get(proxies)
        if middleware is None:
            middleware = self._by_proxies[proxies] = ProxyHeadersMiddleware(self.app, trusted_hosts=list(proxies))
        await middleware(scope, receive, send)


django_application = get_asgi_application()  # sets Django up: the MCP mount below imports models

from backend.channels.mcp.http import McpMount  # noqa: E402

# McpMount: /mcp/ is the MCP server (backend/channels/mcp/); it runs the SDK's session manager for the lifespan.
# MetricsLifespan: the lifespan shutdown publishes the process's last metric counts (backend/core/metrics_asgi.py).
application = TrustedProxies(McpMount(MetricsLifespan(django_application)))
