"""Point discord.py at the configured REST base and gateway (Discord itself, a compatible proxy, or a test fake)."""

from __future__ import annotations

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route


def point_discord_py_at(api_url: str, gateway_url: str) -> None:
    """discord.py reads both from class attributes, so they are set once per process, before any client starts."""
    Route.BASE = api_url.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
