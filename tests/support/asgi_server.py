"""Pytest plugin: the Django ASGI app under uvicorn in a background thread of the test process (asgi_live_server)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import pytest

STARTUP_TIMEOUT_S = 15.0
SHUTDOWN_TIMEOUT_S = 10.0


@pytest.fixture
def asgi_live_server() -> Iterator[str]:
    """Serve the project at http://127.0.0.1:<free port> and yield that base URL (no trailing slash).

    The server runs in this process, so it sees pytest-django's test database: use it with
    @pytest.mark.django_db(transaction=True) so the server's connections see committed rows.
    """
    with _live_server(lifespan="off") as url:
        yield url


@pytest.fixture
def asgi_live_server_lifespan() -> Iterator[str]:
    """asgi_live_server with the ASGI lifespan run, as uvicorn runs it in production (the MCP endpoint needs it)."""
    with _live_server(lifespan="on") as url:
        yield url


@contextmanager
def _live_server(*, lifespan: Literal["on", "off"]) -> Iterator[str]:
    import uvicorn

    from backend.config.asgi import application

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # bound here and handed over: no race for the port
    port = int(sock.getsockname()[1])
    # The production app and flags: uvicorn believes no forwarding header, the app's TrustedProxies decides.
    config = uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan,
                            proxy_headers=False, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread below
            errors.append(exc)

    thread = threading.Thread(target=serve, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if errors or not thread.is_alive():
            sock.close()
            raise RuntimeError(f"uvicorn did not start: {errors[0] if errors else 'thread exited'}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start within {STARTUP_TIMEOUT_S} s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(SHUTDOWN_TIMEOUT_S)
        sock.close()
        if thread.is_alive():
            server.force_exit = True
            thread.join(SHUTDOWN_TIMEOUT_S)
