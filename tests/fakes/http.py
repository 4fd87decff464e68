"""A threaded HTTP server on 127.0.0.1 (random port) that routes requests to a handler function."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


class FakeResponder:
    """Lets a route write a JSON reply, an error, or a stream of chunks (SSE or plain)."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._h = handler

    def json(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.raw(json.dumps(payload).encode(), status=status, headers={"Content-Type": "application/json",
                                                                        **(headers or {})})

    def raw(self, body: bytes, *, status: int = 200, headers: dict[str, str] | None = None) -> None:
        """Any status, headers and body (HTML, XML, bytes)."""
        self._h.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            self._h.send_header(name, value)
        self._h.end_headers()
        self._h.wfile.write(body)

    def start_stream(self, content_type: str = "text/event-stream") -> None:
        self._h.send_response(200)
        self._h.send_header("Content-Type", content_type)
        self._h.send_header("Cache-Control", "no-cache")
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.close_connection = True

    def write(self, data: bytes) -> bool:
        """Send bytes now; False when the client has gone away."""
        try:
            self._h.wfile.write(data)
            self._h.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False


Route = Callable[[FakeRequest, FakeResponder], None]


class _Handler(BaseHTTPRequestHandler):
    route: Route

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = FakeRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                              self.rfile.read(length) if length else b"")
        type(self).route(request, FakeResponder(self))

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (silence per-request logs)
        return


@contextmanager
def serve(route: Route) -> Iterator[str]:
    """Run `route` behind a real HTTP server; yields its base URL (http://127.0.0.1:PORT)."""
    handler = type("Handler", (_Handler,), {"route": staticmethod(route)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll interval keeps shutdown() from waiting out the default 0.5 s at every teardown.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
