"""ASGI lifespan for the web server: publish this process's last metric counts when it shuts down.

uvicorn re-raises the SIGTERM/SIGINT it caught once it has stopped, so the process ends by that signal
and atexit handlers never run; the lifespan `shutdown` event is the clean exit a web process gets.
Django's ASGI handler refuses lifespan scopes, so this answers them and passes everything else on.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async


class MetricsLifespan:
    """Wraps the Django ASGI application; handles only `lifespan` scopes itself."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                from backend.core import metrics  # imports models: only once Django is set up

                await sync_to_async(metrics.publish_at_exit, thread_sensitive=False)()  # it never raises
                await send({"type": "lifespan.shutdown.complete"})
                return
