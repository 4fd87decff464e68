"""`./openguru manage slack_socket`: hold the Socket Mode connections of every Socket Mode Slack integration."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.core.management.base import BaseCommand

from backend.channels.slack.socket import SocketSupervisor


async def _serve() -> None:
    supervisor = SocketSupervisor()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, supervisor.stopping.set)
    await supervisor.run()


class Command(BaseCommand):
    help = "Connect to Slack over Socket Mode for each integration that uses it (no public URL needed)."

    def handle(self, *args: Any, **options: Any) -> None:
        asyncio.run(_serve())
