"""A uvicorn server in a thread that a test can kill mid-request (every connection dropped) and start again."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


def eventually(check: Callable[[], bool], what: str, timeout: float = 20) -> None:
    """Poll an observable condition until it holds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class WebServer:
    """A uvicorn server in a thread of this process; `kill()` drops every connection, as a dying process does."""

    url: str
    port: int
    kill: Callable[[], None]


@contextmanager
def uvicorn_server(port: int = 0) -> Iterator[WebServer]:
    """The project's ASGI app under uvicorn on `port` (0: a free one)."""
    import uvicorn
    from django.core.asgi import get_asgi_application

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(get_asgi_application(), log_level="warning", lifespan="off",
                                           timeout_graceful_shutdown=0))
    loops: list[asyncio.AbstractEventLoop] = []

    async def serve() -> None:
        loops.append(asyncio.get_running_loop())
        await server.serve(sockets=[sock])

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    eventually(lambda: server.started, "uvicorn to start")

    def kill() -> None:
        if not thread.is_alive():
            return
        # The OS closes a killed process's sockets at once; here every open connection is closed the same way.
        for connection in list(server.server_state.connections):
            loops[0].call_soon_threadsafe(connection.transport.close)
        server.should_exit = server.force_exit = True
        thread.join(10)

    try:
        yield WebServer(f"http://127.0.0.1:{sock.getsockname()[1]}", int(sock.getsockname()[1]), kill)
    finally:
        kill()
        sock.close()


