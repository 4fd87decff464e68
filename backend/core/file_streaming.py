"""Downloads that stream under ASGI: a block read, a block sent.

Under ASGI (uvicorn, both profiles) Django reads a streaming response built on a synchronous iterator to its
end, into memory, before the first byte goes out: a 100 MB PDF cited in an answer cost the web process 100 MB
per click, a 100,000-row CSV export all its rows at once. Files keep FileResponse's headers (length, type,
disposition) and are read a block at a time in a worker thread; generated lines are made a batch at a time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import IO

from asgiref.sync import sync_to_async
from django.http import FileResponse

BLOCK_BYTES = 64 * 1024
"""What uvicorn is handed per send: the size Django's ASGI handler reads a file in."""


async def _blocks(handle: IO[bytes]) -> AsyncIterator[bytes]:
    read = sync_to_async(handle.read, thread_sensitive=False)
    try:
        while block := await read(BLOCK_BYTES):
            yield block
    finally:
        await sync_to_async(handle.close, thread_sensitive=False)()


def streamed_file(handle: IO[bytes], *, content_type: str, filename: str = "") -> FileResponse:
    """A FileResponse for `handle` whose body is read block by block as it is sent (and the file closed)."""
    response = FileResponse(handle, content_type=content_type, filename=filename)
    response.streaming_content = _blocks(handle)
    return response


async def in_batches(lines: Iterator[str], batch: int) -> AsyncIterator[str]:
    """`lines` (which may read the database) made `batch` at a time in the request's thread, as they are sent."""
    take = sync_to_async(lambda: [line for _, line in zip(range(batch), lines, strict=False)])
    try:
        while made := await take():
            for line in made:
                yield line
    finally:
        # An asker who leaves mid-download must not leave the query's cursor to the garbage collector's thread.
        close = getattr(lines, "close", None)
        if close is not None:
            await sync_to_async(close)()
