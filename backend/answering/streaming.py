"""Bridge a synchronous event generator (the pipeline) to an async SSE body for ASGI servers.

The pipeline runs in a worker thread; events cross to the event loop through a queue. When the
client disconnects, the server cancels the async body and the pipeline's CancelToken is set, so the
LLM stream is closed instead of running to the end.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator

from django.db import close_old_connections

from backend.answering.events import AnswerEvent
from backend.pipeline.llm_types import CancelToken

logger = logging.getLogger(__name__)
_END = object()


def _pump(produce: Callable[[], Iterator[AnswerEvent]], loop: asyncio.AbstractEventLoop,
          queue: asyncio.Queue[object], cancel: CancelToken) -> None:
    close_old_connections()
    try:
        for event in produce():
            loop.call_soon_threadsafe(queue.put_nowait, event)
            if cancel.cancelled:
                break
    except Exception:  # the stream boundary: log it; the client gets the end of the stream
        logger.exception("answer stream failed")
    finally:
        close_old_connections()
        loop.call_soon_threadsafe(queue.put_nowait, _END)


async def sse_body(produce: Callable[[], Iterator[AnswerEvent]], cancel: CancelToken) -> AsyncIterator[bytes]:
    """Yield SSE-framed events as the pipeline produces them."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()
    thread = threading.Thread(target=_pump, args=(produce, loop, queue, cancel), daemon=True, name="answer-stream")
    thread.start()
    try:
        while (item := await queue.get()) is not _END:
            assert isinstance(item, AnswerEvent)
            yield item.sse().encode()
    finally:
        # Reached on normal end and on client disconnect (GeneratorExit / CancelledError alike).
        cancel.cancel()


def sync_sse_body(produce: Callable[[], Iterator[AnswerEvent]]) -> Iterator[bytes]:
    """The same body for WSGI servers, which stream synchronous iterators."""
    for event in produce():
        yield event.sse().encode()
