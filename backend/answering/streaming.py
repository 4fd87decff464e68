"""Run the answer pipeline (a synchronous event generator) in a thread and hand its events to a view.

The view takes the first event before it chooses the response: an error known before the first byte is
answered with its real HTTP status; otherwise the first event and the rest are streamed. Events cross
threads through a small channel that both sync views (the API) and async views (guru page, widget) can
wait on. When the client disconnects, the server cancels the body, the CancelToken is set, the LLM
stream is closed at its next chunk and the pipeline generator is closed (it records the question as
cancelled).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeGuard

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

from backend.answering.events import AnswerEvent, EventKind, error
from backend.core import metrics
from backend.core.db import release_connections
from backend.core.errors import PUBLIC_MESSAGES, InternalError, new_error_id
from backend.pipeline.llm_types import CancelToken

logger = logging.getLogger(__name__)
Encoder = Callable[[AnswerEvent], bytes]
SSE_HEARTBEAT = b": keep-alive\n\n"


class _Idle:
    """No event came for a heartbeat interval."""


_IDLE = _Idle()


class _Channel:
    """A thread-safe FIFO a producer thread fills; consumers wait on it synchronously or on any event loop."""

    def __init__(self) -> None:
        self._items: deque[AnswerEvent | None] = deque()
        self._cond = threading.Condition()
        self._wake: Callable[[], None] | None = None

    def put(self, item: AnswerEvent | None) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()
            wake, self._wake = self._wake, None
        if wake is not None:
            wake()

    def ready(self) -> tuple[list[AnswerEvent], bool]:
        """Every event already queued (without waiting), and whether the end of the stream is among them."""
        with self._cond:
            taken: list[AnswerEvent] = []
            while self._items:
                item = self._items.popleft()
                if item is None:
                    return taken, True
                taken.append(item)
            return taken, False

    def get_sync(self) -> AnswerEvent | None:
        with self._cond:
            self._cond.wait_for(lambda: bool(self._items))
            return self._items.popleft()

    async def get(self) -> AnswerEvent | None:
        loop = asyncio.get_running_loop()
        while True:
            ready = asyncio.Event()
            with self._cond:
                if self._items:
                    return self._items.popleft()
                self._wake = functools.partial(_call_soon, loop, ready.set)
            await ready.wait()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    # A closed loop raises RuntimeError: its consumer is gone and nobody waits for the wake-up.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


class AnswerPump:
    """The pipeline in a daemon thread; `first()`/`first_sync()` then `sse()` or `chunks()` read its events."""

    def __init__(self, produce: Callable[[], Iterator[AnswerEvent]], cancel: CancelToken) -> None:
        self.cancel = cancel
        self._channel = _Channel()
        self._thread = threading.Thread(target=self._run, args=(produce,), daemon=True, name="answer-stream")
        self._thread.start()

    def _run(self, produce: Callable[[], Iterator[AnswerEvent]]) -> None:
        metrics.stream_opened()
        try:
            self._pump(produce)
        finally:
            metrics.stream_closed()

    def _pump(self, produce: Callable[[], Iterator[AnswerEvent]]) -> None:
        close_old_connections()
        events = produce()
        try:
            # The pipeline gives its connection back before each wait on the model (answering/services.py).
            for event in events:
                self._channel.put(event)
                if self.cancel.cancelled:
                    break
        except Exception:  # answer_stream turns failures into events; this is a last resort, logged
            error_id = new_error_id()
            logger.exception("answer stream failed (error id %s)", error_id)
            self._channel.put(error(InternalError.code, PUBLIC_MESSAGES[InternalError.code], error_id))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()  # runs the pipeline's GeneratorExit handling here, in the thread that owns its connection
            close_old_connections()
            self._channel.put(None)

    async def first(self, encode: Encoder | None = None) -> AnswerEvent | None:
        """The first event that `encode` turns into bytes (any event without it), an error, or None at the end.

        Events the response would not send (a markdown stream sends only text) are passed over, so an error
        before the first byte still gets its HTTP status. A cancelled wait cancels the pipeline.
        """
        try:
            # The view's queries are done: its request thread must not keep a connection while the pipeline
            # (which needs one of its own) runs, or a full pool would deadlock requests against their pipelines.
            await sync_to_async(release_connections)()
            while (event := await self._channel.get()) is not None and _silent(event, encode):
                continue
            return event
        except BaseException:
            self.cancel.cancel()
            raise

    def first_sync(self, encode: Encoder | None = None) -> AnswerEvent | None:
        """`first()` for sync views (the API), which run in a thread of their own."""
        release_connections()  # as in first()
        while (event := self._channel.get_sync()) is not None and _silent(event, encode):
            continue
        return event

    async def body(self, first: AnswerEvent | None, encode: Encoder = lambda e: e.sse().encode(), *,
                   heartbeat: bytes | None = SSE_HEARTBEAT) -> AsyncIterator[bytes]:
        """`first`, then every later event, encoded (SSE framing by default; empty encodings are skipped).

        While no event comes for OPENGURU_STREAM_HEARTBEAT seconds, `heartbeat` is sent (an SSE comment,
        which clients ignore), so proxies that cut idle connections keep a slow answer open.
        One generator, not a chain of them: the server closes exactly this one when the client goes away.
        """
        try:
            item = first
            while item is not None:
                # Events that queued up while the server was busy go out in one write, not one each.
                more, ended = self._channel.ready()
                if chunk := b"".join(encode(event) for event in (item, *more)):
                    yield chunk
                if ended:
                    return
                following = await self._next(heartbeat)
                while isinstance(following, _Idle):
                    yield heartbeat or b""
                    following = await self._next(heartbeat)
                item = following
        finally:
            # Reached on normal end and on client disconnect (GeneratorExit / CancelledError alike).
            self.cancel.cancel()


    async def _next(self, heartbeat: bytes | None) -> AnswerEvent | None | _Idle:
        """The next event, or _IDLE when a heartbeat is due first."""
        interval = settings.OPENGURU_STREAM_HEARTBEAT
        if not heartbeat or interval <= 0:
            return await self._channel.get()
        try:
            return await asyncio.wait_for(self._channel.get(), timeout=interval)
        except TimeoutError:
            return _IDLE


def _silent(event: AnswerEvent, encode: Encoder | None) -> bool:
    return encode is not None and event.kind is not EventKind.ERROR and not encode(event)


def is_error(event: AnswerEvent | None) -> TypeGuard[AnswerEvent]:
    """Whether the stream's first event is an error: then nothing was sent and a real status can be used."""
    return event is not None and event.kind is EventKind.ERROR
