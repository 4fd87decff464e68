"""One process, several chat supervisors: a signal stops them all, and one failing stops the others too."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field

import pytest

from backend.channels.bot_process import serve_until_signalled


@dataclass
class Idle:
    """Waits until told to stop, as an idle listener does; remembers that it stopped cleanly."""

    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    started: bool = False
    stopped: bool = False

    async def run(self) -> None:
        self.started = True
        await self.stopping.wait()
        self.stopped = True


@dataclass
class Signaller(Idle):
    """Sends this process SIGTERM once running, as the launcher does on Ctrl-C."""

    async def run(self) -> None:
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)
        await super().run()


@dataclass
class Failing(Idle):
    async def run(self) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("gateway refused")


def test_a_signal_stops_every_supervisor_of_the_process() -> None:
    first, second = Signaller(), Idle()

    serve_until_signalled(first, second)

    assert first.stopped and second.stopped


def test_one_failing_supervisor_stops_the_others_and_ends_the_process() -> None:
    idle = Idle()

    with pytest.raises(RuntimeError, match="gateway refused"):
        serve_until_signalled(idle, Failing())

    assert idle.started and idle.stopped
