"""Lines made in batches as they are sent; the source of lines closed when the download ends early."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from backend.core.file_streaming import in_batches


def test_lines_come_in_order_and_a_download_left_early_closes_their_source() -> None:
    made: list[int] = []
    closed: list[bool] = []

    def lines() -> Iterator[str]:
        try:
            for n in range(10):
                made.append(n)
                yield f"{n}\n"
        finally:
            closed.append(True)

    async def read_all() -> list[str]:
        return [line async for line in in_batches(lines(), 3)]

    assert asyncio.run(read_all()) == [f"{n}\n" for n in range(10)]
    made.clear()
    closed.clear()

    async def read_two() -> tuple[list[str], list[bool]]:
        source = lines()
        stream = in_batches(source, 3)
        first = [await anext(stream), await anext(stream)]
        await stream.aclose()  # the asker went away; `source` is still referenced, so only the stream closed it
        return first, list(closed)

    assert asyncio.run(read_two()) == (["0\n", "1\n"], [True])
    assert made == [0, 1, 2]  # one batch made, nothing more read
