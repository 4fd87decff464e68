"""`./openguru manage discord_listener`: hold the gateway connection of every guru's Discord bot."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from backend.channels.bot_process import serve_until_signalled
from backend.channels.discord.listener import DiscordSupervisor


class Command(BaseCommand):
    help = "Connect each guru's Discord bot to the gateway and answer in threads (idle until one is set up)."

    def handle(self, *args: Any, **options: Any) -> None:
        serve_until_signalled(DiscordSupervisor())
