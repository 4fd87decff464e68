"""Socket Mode: one WebSocket per connected integration, opened by us, so Slack needs no public URL here.

The same `take_in` / `take_action` as the HTTP endpoints run on what arrives; the envelope is acked first
(Slack wants it within 3 s) and the answer is a worker's job, as over HTTP. slack_sdk's aiohttp client: it
notices a dropped socket within one ping and reconnects at once (the builtin client took up to 30 s and
spun a core meanwhile; measured against tests/fakes/slack_socket.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from backend.channels.bot_process import rescan_until_stopped
from backend.channels.slack.inbound import take_action, take_in
from backend.integrations.models import Integration, IntegrationKind, Transport
from backend.integrations.services import health_error

logger = logging.getLogger(__name__)
PING_S = 5.0  # a dropped connection is noticed within one ping


def _fingerprint(integration: Integration) -> str:
    # A changed token means a new connection; other edits (allow-list) are read from the row on each event.
    return f"{integration.app_token}|{integration.access_token}"


def _connected() -> dict[int, Integration]:
    close_old_connections()
    found = Integration.objects.filter(kind=IntegrationKind.SLACK, transport=Transport.SOCKET).exclude(
        app_token="").exclude(access_token="").select_related("guru")
    return {integration.pk: integration for integration in found}


def _dispatch(integration_id: int, kind: str, payload: dict[str, Any]) -> None:
    close_old_connections()
    try:
        integration = Integration.objects.select_related("guru").filter(pk=integration_id).first()
        if integration is None:
            return
        if kind == "events_api":
            take_in(integration, payload)
        elif kind == "interactive":
            take_action(integration, payload)
    finally:
        close_old_connections()


def _on_request(integration_id: int) -> Callable[[AsyncBaseSocketModeClient, SocketModeRequest], Awaitable[None]]:
    async def listener(client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        await asyncio.to_thread(_dispatch, integration_id, request.type, request.payload)  # the ORM is sync
    return listener


def _report(integration: Integration, message: str) -> None:
    close_old_connections()
    health_error(integration=integration, message=message[:300])


@dataclass
class SocketSupervisor:
    """Keeps one connection per Socket Mode integration: opened when added, reopened when its tokens change."""

    clients: dict[int, tuple[str, SocketModeClient]] = field(default_factory=dict)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    async def _open(self, integration: Integration) -> None:
        web = AsyncWebClient(token=integration.access_token, base_url=settings.OPENGURU_SLACK_API_URL)
        client = SocketModeClient(app_token=integration.app_token, web_client=web, auto_reconnect_enabled=True,
                                  ping_interval=PING_S, logger=logging.getLogger("slack_sdk.socket_mode"))
        client.socket_mode_request_listeners.append(_on_request(integration.pk))
        try:
            await client.connect()
        except Exception as exc:  # noqa: BLE001 - any failure to connect is shown on the tab and retried
            await asyncio.to_thread(_report, integration, f"Socket Mode could not connect: {exc}")
            await client.close()
            return
        self.clients[integration.pk] = (_fingerprint(integration), client)
        logger.info("Slack Socket Mode connected for %s", integration)

    async def _close(self, pk: int) -> None:
        _, client = self.clients.pop(pk)
        await client.close()
        logger.info("Slack Socket Mode closed for integration %s", pk)

    async def rescan(self) -> None:
        wanted = await asyncio.to_thread(_connected)
        for pk in [pk for pk, (fp, _) in self.clients.items() if pk not in wanted or fp != _fingerprint(wanted[pk])]:
            await self._close(pk)
        for pk, integration in wanted.items():
            if pk not in self.clients:
                await self._open(integration)

    async def run(self) -> None:
        rescan = settings.OPENGURU_SLACK_SOCKET_RESCAN_S
        logger.info("Slack Socket Mode process ready (rescanning every %s s)", rescan)
        await rescan_until_stopped(self.stopping, rescan, self.rescan)
        for pk in list(self.clients):
            await self._close(pk)
