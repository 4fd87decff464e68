"""`./openguru manage slack_socket`: hold the Socket Mode connections of every Socket Mode Slack integration."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from backend.channels.bot_process import serve_until_signalled
from backend.channels.slack.socket import SocketSupervisor


class Command(BaseCommand):
    help = "Connect to Slack over Socket Mode for each integration that uses it (no public URL needed)."

    def handle(self, *args: Any, **options: Any) -> None:
        serve_until_signalled(SocketSupervisor())
