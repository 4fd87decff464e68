"""`./openguru manage discord_listener`: hold the gateway connection of every guru's Discord bot."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.core.management.base import BaseCommand

from backend.channels.discord.listener import DiscordSupervisor


async def _serve() -> None:
    supervisor = DiscordSupervisor()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, supervisor.stopping.set)
    await supervisor.run()


class Command(BaseCommand):
    help = "Connect each guru's Discord bot to the gateway and answer in threads (idle until one is set up)."

    def handle(self, *args: Any, **options: Any) -> None:
        asyncio.run(_serve())
