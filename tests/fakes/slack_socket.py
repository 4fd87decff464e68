"""Fake Slack Socket Mode endpoint: a WebSocket server speaking Slack's hello / envelope / ack / disconnect protocol."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
import uuid
from http import HTTPStatus
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve

# Slack sets accepts_response_payload for the payload kinds an app may answer inline (slash commands, and
# interactive payloads such as view submissions); Events API envelopes never accept one.
_ACCEPTS_RESPONSE = {"events_api": False, "interactive": True, "slash_commands": True}
EnvelopeType = Literal["events_api", "interactive", "slash_commands"]
DropMode = Literal["fin", "rst", "close"]


class SocketModeServer:
    """Issues tickets for apps.connections.open, accepts WebSocket clients holding one, pushes envelopes to them."""

    def __init__(self, app_id: str) -> None:
        self.app_id = app_id
        self._cond = threading.Condition()
        self._open: list[ServerConnection] = []
        self._total = 0
        self._tickets: set[str] = set()
        self._acks: dict[str, dict[str, Any]] = {}
        self._received: list[dict[str, Any]] = []
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        # No server-initiated pings: Slack's clients ping on their own schedule and tests stay quiet.
        self._server = serve(self._handle, "127.0.0.1", 0, process_request=self._check_ticket, compression=None,
                             ping_interval=None, close_timeout=1)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="fake-slack-socket")
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()  # closes open connections with 1001 (going away) and waits for their handlers
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    # --- what apps.connections.open hands out --------------------------------------------------------------

    def issue_url(self) -> str:
        """A fresh WebSocket URL in Slack's shape (…/link/?ticket=…&app_id=…)."""
        ticket = uuid.uuid4().hex
        with self._cond:
            self._tickets.add(ticket)
        return f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={self.app_id}"

    def _check_ticket(self, connection: ServerConnection, request: Request) -> Response | None:
        parts = urlsplit(request.path)
        ticket = (parse_qs(parts.query).get("ticket") or [""])[0]
        with self._cond:
            known = parts.path.rstrip("/") == "/link" and ticket in self._tickets
        if known:
            return None
        return Response(HTTPStatus.UNAUTHORIZED, "Unauthorized", Headers({"Content-Length": "0"}), b"")

    # --- one client connection ------------------------------------------------------------------------------

    def _handle(self, connection: ServerConnection) -> None:
        with self._cond:
            self._open.append(connection)
            self._total += 1
            count = len(self._open)
            self._cond.notify_all()
        try:
            connection.send(json.dumps(self._hello(count)))
            for raw in connection:
                self._on_client_message(raw)
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                if connection in self._open:
                    self._open.remove(connection)
                self._cond.notify_all()

    def _hello(self, num_connections: int) -> dict[str, Any]:
        return {"type": "hello", "num_connections": num_connections,
                "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
                "connection_info": {"app_id": self.app_id}}

    def _on_client_message(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            message = {"unparsed": raw if isinstance(raw, str) else raw.decode(errors="replace")}
        with self._cond:
            self._received.append(message)
            envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
            if envelope_id:
                self._acks[str(envelope_id)] = message
            self._cond.notify_all()

    # --- what tests drive -----------------------------------------------------------------------------------

    def push(self, payload: dict[str, Any], type: EnvelopeType = "events_api", *,  # noqa: A002  (Slack's field)
             accepts_response_payload: bool | None = None, retry_attempt: int = 0, retry_reason: str = "") -> str:
        """Send one envelope to the newest open connection (Slack delivers each to one of them); its id."""
        envelope_id = str(uuid.uuid4())
        accepts = _ACCEPTS_RESPONSE[type] if accepts_response_payload is None else accepts_response_payload
        envelope = {"envelope_id": envelope_id, "type": type, "payload": payload,
                    "accepts_response_payload": accepts, "retry_attempt": retry_attempt,
                    "retry_reason": retry_reason}
        with self._cond:
            if not self._open:
                raise RuntimeError("no Socket Mode client is connected to the fake Slack")
            target = self._open[-1]
        target.send(json.dumps(envelope))
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        """The client's acknowledgement of an envelope (with its `payload` when it answered inline)."""
        with self._cond:
            if not self._cond.wait_for(lambda: envelope_id in self._acks, timeout=timeout):
                raise TimeoutError(f"envelope {envelope_id} was not acknowledged within {timeout} s")
            return dict(self._acks[envelope_id])

    def acked(self, envelope_id: str) -> bool:
        with self._cond:
            return envelope_id in self._acks

    def received(self) -> list[dict[str, Any]]:
        """Every message clients sent, in order (acks and anything else)."""
        with self._cond:
            return list(self._received)

    def wait_connected(self, n: int = 1, timeout: float = 10) -> None:
        """Until n connections were made in total (so n=2 after one drop means: the client came back)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._total >= n and bool(self._open), timeout=timeout):
                raise TimeoutError(f"{self._total} of {n} Socket Mode connections within {timeout} s")

    @property
    def connections_total(self) -> int:
        with self._cond:
            return self._total

    @property
    def connections_open(self) -> int:
        with self._cond:
            return len(self._open)

    def drop_connections(self, how: DropMode = "fin") -> int:
        """End every connection: "fin"/"rst" cut the TCP socket with no WebSocket close frame (RST as a dead
        network would), "close" is an orderly close frame 1001 (going away) as a restarting server sends."""
        with self._cond:
            victims = list(self._open)
        for connection in victims:
            if how == "close":
                connection.close(1001, "going away")  # waits up to close_timeout for the client's answer
                continue
            if how == "rst":
                with contextlib.suppress(OSError):  # already gone
                    connection.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            # websockets' own abrupt close: the socket goes without a close frame and its reader thread ends.
            connection.close_socket()
        self._wait_closed(victims)
        return len(victims)

    def _wait_closed(self, victims: list[ServerConnection], timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            self._cond.wait_for(lambda: not any(c in self._open for c in victims),
                                timeout=max(0.0, deadline - time.monotonic()))

    def send_disconnect(self, reason: str = "refresh_requested") -> int:
        """Slack's `disconnect` message to every open connection (the client should reconnect on its own)."""
        message = json.dumps({"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}})
        with self._cond:
            targets = list(self._open)
        for connection in targets:
            with contextlib.suppress(ConnectionClosed):
                connection.send(message)
        return len(targets)
