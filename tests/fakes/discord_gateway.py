"""The fake Discord gateway: HELLO, IDENTIFY/READY, heartbeats, RESUME with replay, INVALID_SESSION, close codes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.discord_objects import MESSAGE_CONTENT, Bot, Json

try:  # discord.py asks for zstd-stream when `zstandard` is importable (it is here, via langsmith), else zlib-stream
    import zstandard
except ImportError:  # pragma: no cover - depends on the environment
    zstandard = None  # type: ignore[assignment]

HEARTBEAT_INTERVAL_MS = 41250  # Discord's usual value; discord.py beats at once and then every interval
MAX_BUFFERED_EVENTS = 2000  # per session, for RESUME replay
CLIENT_ENDS_SESSION = {1000, 1001}  # a client closing with these gives up its session (Discord's rule)


class _Compressor:
    """Transport compression as the client asked in `?compress=` (Discord sends binary frames then)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._zlib = zlib.compressobj() if kind == "zlib-stream" else None
        self._zstd = (zstandard.ZstdCompressor().compressobj()
                      if kind == "zstd-stream" and zstandard is not None else None)

    def pack(self, text: str) -> str | bytes:
        raw = text.encode()
        if self._zlib is not None:
            return self._zlib.compress(raw) + self._zlib.flush(zlib.Z_SYNC_FLUSH)  # ends in 00 00 ff ff
        if self._zstd is not None:
            return self._zstd.compress(raw) + self._zstd.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        return text  # discord.py reads plain text frames too


@dataclass
class _Connection:
    ws: web.WebSocketResponse
    request: web.Request
    loop: asyncio.AbstractEventLoop
    compressor: _Compressor
    queue: asyncio.Queue[tuple[str, Any]] = field(default_factory=asyncio.Queue)
    session: Session | None = None

    def send(self, payload: Json | str) -> None:
        """Thread-safe and ordered: frames go out in the order they were queued."""
        text = payload if isinstance(payload, str) else json.dumps(payload)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, ("frame", text))

    def close(self, code: int, reason: str) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, ("close", (code, reason)))

    def abort(self) -> None:
        """Cut the TCP connection without a close frame, as a network failure or a gateway crash does."""
        self.loop.call_soon_threadsafe(self._abort_now)

    def _abort_now(self) -> None:
        transport = self.request.transport
        if transport is not None:
            transport.abort()
        self.queue.put_nowait(("stop", None))


@dataclass
class Session:
    id: str
    token: str
    intents: int
    seq: int = 0
    events: list[tuple[int, str]] = field(default_factory=list)
    conn: _Connection | None = None

    def push(self, name: str, data: Json) -> None:
        self.seq += 1
        frame = json.dumps({"op": 0, "t": name, "s": self.seq, "d": data})
        self.events.append((self.seq, frame))
        del self.events[:-MAX_BUFFERED_EVENTS]
        if self.conn is not None:
            self.conn.send(frame)


def constant(data: Json) -> Callable[[Session], Json | None]:
    """An event payload that is the same for every session."""
    return lambda session: data


def needs(intent: int, data: Json) -> Callable[[Session], Json | None]:
    """An event payload delivered only to sessions that identified with `intent`."""
    return lambda session: data if session.intents & intent else None


class Gateway:
    """Sessions of every bot; `dispatch` hands an event to each live or resumable session of a bot."""

    def __init__(self, lock: Any, bot: Callable[[str], Bot | None], ready: Callable[[Bot, str], Json],
                 guild_creates: Callable[[Bot], list[Json]]) -> None:
        self.lock, self._bot, self._ready, self._guild_creates = lock, bot, ready, guild_creates
        self.sessions: dict[str, Session] = {}
        self.open: list[_Connection] = []
        self.identifies: Counter[str] = Counter()
        self.resumes: Counter[str] = Counter()
        self.invalid_sessions: Counter[str] = Counter()

    # --- what the fake's state calls -----------------------------------------------------------------------

    def dispatch(self, token: str, name: str, data_for: Callable[[Session], Json | None]) -> None:
        """Queue `name` for every session of the bot; data_for(session) gives its payload (None: not delivered,
        e.g. for want of an intent). Disconnected sessions buffer it for a RESUME."""
        with self.lock:
            for session in list(self.sessions.values()):
                if session.token == token:
                    data = data_for(session)
                    if data is not None:
                        session.push(name, data)

    def drop(self, token: str | None) -> None:
        with self.lock:
            victims = [c for c in self.open if token is None or (c.session and c.session.token == token)]
            for conn in victims:
                self._detach(conn)
        for conn in victims:
            conn.abort()

    def invalidate(self, token: str | None) -> None:
        """Forget sessions (as Discord does after a while): the next RESUME gets INVALID_SESSION."""
        with self.lock:
            for sid, session in list(self.sessions.items()):
                if token is None or session.token == token:
                    del self.sessions[sid]

    def reconnect(self, token: str | None) -> None:
        """Op 7 RECONNECT: the client should close and RESUME."""
        with self.lock:
            for conn in self.open:
                if conn.session and (token is None or conn.session.token == token):
                    conn.send({"op": 7, "d": None})

    def connected(self, token: str) -> bool:
        with self.lock:
            return any(c.session is not None and c.session.token == token for c in self.open)

    # --- one WebSocket -------------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        conn = _Connection(ws, request, asyncio.get_running_loop(), _Compressor(request.query.get("compress", "")))
        with self.lock:
            self.open.append(conn)
        writer = asyncio.create_task(self._write(conn))
        conn.send({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    self._on_frame(conn, json.loads(msg.data))
        finally:
            self._on_gone(conn, ws.close_code)
            conn.queue.put_nowait(("stop", None))
            with contextlib.suppress(asyncio.CancelledError):
                await writer
        return ws

    async def _write(self, conn: _Connection) -> None:
        while True:
            kind, value = await conn.queue.get()
            if kind == "stop" or conn.ws.closed:
                return
            try:
                if kind == "close":
                    await conn.ws.close(code=value[0], message=value[1].encode())
                    return
                packed = conn.compressor.pack(value)
                await (conn.ws.send_bytes(packed) if isinstance(packed, bytes) else conn.ws.send_str(packed))
            except (ConnectionError, RuntimeError):
                return

    def _on_gone(self, conn: _Connection, close_code: int | None) -> None:
        with self.lock:
            if conn in self.open:
                self.open.remove(conn)
            session = conn.session
            self._detach(conn)
            if session is not None and close_code in CLIENT_ENDS_SESSION:
                self.sessions.pop(session.id, None)

    def _detach(self, conn: _Connection) -> None:
        if conn.session is not None and conn.session.conn is conn:
            conn.session.conn = None
        conn.session = None

    def _on_frame(self, conn: _Connection, frame: Json) -> None:
        op, data = frame.get("op"), frame.get("d")
        if op == 1:
            conn.send({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            self._identify(conn, data or {})
        elif op == 6:
            self._resume(conn, data or {})

    def _identify(self, conn: _Connection, data: Json) -> None:
        token = str(data.get("token", "")).removeprefix("Bot ")
        bot = self._bot(token)
        with self.lock:
            self.identifies[token] += 1
        if bot is None:
            conn.close(4004, "Authentication failed.")
            return
        intents = int(data.get("intents", 0))
        if intents & MESSAGE_CONTENT and not bot.message_content:
            conn.close(4014, "Disallowed intent(s).")
            return
        with self.lock:
            session = Session(uuid.uuid4().hex, token, intents)
            self.sessions[session.id] = session
            session.conn, conn.session = conn, session
            session.push("READY", self._ready(bot, session.id))
            for guild in self._guild_creates(bot):
                session.push("GUILD_CREATE", guild)

    def _resume(self, conn: _Connection, data: Json) -> None:
        token = str(data.get("token", "")).removeprefix("Bot ")
        with self.lock:
            session = self.sessions.get(str(data.get("session_id")))
            if session is None or session.token != token:
                self.invalid_sessions[token] += 1
                conn.send({"op": 9, "d": False, "s": None, "t": None})
                return
            if session.conn is not None and session.conn is not conn:
                old = session.conn
                self._detach(old)
                old.close(4000, "Session resumed elsewhere.")
            session.conn, conn.session = conn, session
            last_seen = int(data.get("seq") or 0)
            for seq, frame in session.events:
                if seq > last_seen:
                    conn.send(frame)
            self.resumes[token] += 1
            session.push("RESUMED", {})
