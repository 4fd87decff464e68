"""What both chat-bot processes do around their connections: rescan the integrations until a signal stops them."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Protocol


class Supervisor(Protocol):
    stopping: asyncio.Event

    async def run(self) -> None: ...


async def rescan_until_stopped(stopping: asyncio.Event, interval: float,
                               rescan: Callable[[], Awaitable[None]]) -> None:
    """`rescan` now, then every `interval` seconds, until `stopping` is set (at once, not at the next rescan)."""
    while not stopping.is_set():
        await rescan()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=interval)


def serve_until_signalled(*supervisors: Supervisor) -> None:
    """Run the supervisors on one event loop in this process until SIGTERM (compose, the launcher) or SIGINT.

    If one of them fails, the others are stopped too and the error ends the process, so whoever supervises it
    (the launcher, compose) restarts them all rather than leaving half the bots running unseen.
    """
    def stop_all() -> None:
        for supervisor in supervisors:
            supervisor.stopping.set()

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop_all)
        tasks = [asyncio.create_task(supervisor.run()) for supervisor in supervisors]
        try:
            await asyncio.gather(*tasks)
        finally:
            stop_all()
            await asyncio.gather(*tasks, return_exceptions=True)
    asyncio.run(serve())
