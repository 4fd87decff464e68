"""`./openguru manage chat_listeners`: Slack's Socket Mode and Discord's gateway connections in one process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from backend.channels.bot_process import serve_until_signalled
from backend.channels.discord.listener import DiscordSupervisor
from backend.channels.slack.socket import SocketSupervisor


class Command(BaseCommand):
    help = ("Run slack_socket and discord_listener together on one event loop (what `./openguru start` runs; "
            "idle until a maintainer sets up a Socket Mode Slack integration or a Discord bot).")
    # Started after `prepare`, which ran the system checks for this start; running them again costs the
    # process half a second of importing every URL module it never serves.
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, **options: Any) -> None:
        serve_until_signalled(SocketSupervisor(), DiscordSupervisor())
