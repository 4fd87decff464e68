"""The Discord process: one gateway connection per bot token in use, opened, replaced and closed as setups change.

discord.py reconnects (and resumes the session) by itself after a dropped connection or a gateway error; what
it cannot fix — a refused token, a privileged intent not turned on — is written on the Integrations tab and
tried again later, with a growing pause.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass, field

import aiohttp
import discord
from django.conf import settings

from backend.adapters.discord.endpoints import point_discord_py_at
from backend.channels.bot_process import rescan_until_stopped
from backend.channels.discord import handle
from backend.channels.discord.client import GuruBot

logger = logging.getLogger(__name__)
RETRY_S = (5.0, 30.0, 120.0, 600.0)  # after a failed login: token refused, intent off, Discord unreachable


def _name(token: str) -> str:
    """A bot is named in logs by a hash of its token, never by the token."""
    return "bot-" + hashlib.sha256(token.encode()).hexdigest()[:10]


def why(exc: BaseException) -> str:
    """A sentence for the Integrations tab on what to fix."""
    if isinstance(exc, discord.LoginFailure):
        return "Discord refused the bot token. Reset it in the Developer Portal (Bot → Reset Token) and paste it again."
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return ("Discord refused the connection: turn on the Message Content intent (Developer Portal → Bot → "
                "Privileged Gateway Intents), then wait a minute.")
    if isinstance(exc, (OSError, aiohttp.ClientError, discord.GatewayNotFound)):
        return f"Could not reach Discord: {exc}"
    return f"The Discord connection stopped: {type(exc).__name__}: {exc}"


@dataclass
class Running:
    bot: GuruBot
    task: asyncio.Task[None]


@dataclass
class DiscordSupervisor:
    """Keeps one connected GuruBot per token; the gurus a bot serves are updated in place."""

    running: dict[str, Running] = field(default_factory=dict)
    retry_at: dict[str, tuple[float, int]] = field(default_factory=dict)  # token -> (when, failures so far)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    async def _serve(self, token: str, bot: GuruBot) -> None:
        try:
            await bot.start(token, reconnect=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every reason a bot stops is shown on the tab and retried
            failures = self.retry_at.get(token, (0.0, 0))[1]
            self.retry_at[token] = (time.monotonic() + RETRY_S[min(failures, len(RETRY_S) - 1)], failures + 1)
            logger.warning("Discord %s stopped: %s", _name(token), why(exc))
            await handle.in_thread(handle.failed, bot.integration_ids, why(exc))
        finally:
            if not bot.is_closed():
                await bot.close()

    def _open(self, token: str, ids: list[int]) -> None:
        bot = GuruBot(ids)
        self.running[token] = Running(bot, asyncio.create_task(self._serve(token, bot), name=_name(token)))
        logger.info("Discord %s connecting for integration(s) %s", _name(token), ids)

    async def _close(self, token: str) -> None:
        found = self.running.pop(token)
        await found.bot.close()
        found.task.cancel()
        await asyncio.gather(found.task, return_exceptions=True)
        logger.info("Discord %s closed", _name(token))

    async def rescan(self) -> None:
        wanted = await handle.in_thread(handle.integrations_by_token)
        for token in [t for t, r in self.running.items() if t not in wanted or r.task.done()]:
            await self._close(token)
        for token, ids in wanted.items():
            if token in self.running:
                self.running[token].bot.integration_ids = ids
            elif self.retry_at.get(token, (0.0, 0))[0] <= time.monotonic():
                self._open(token, ids)
        self.retry_at = {t: r for t, r in self.retry_at.items() if t in wanted}

    async def run(self) -> None:
        point_discord_py_at(settings.OPENGURU_DISCORD_API_URL, settings.OPENGURU_DISCORD_GATEWAY_URL)
        rescan = settings.OPENGURU_DISCORD_RESCAN_S
        logger.info("Discord listener ready (rescanning every %s s)", rescan)
        await rescan_until_stopped(self.stopping, rescan, self.rescan)
        for token in list(self.running):
            await self._close(token)
