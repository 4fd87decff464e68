"""Socket Mode: one WebSocket per connected integration, opened by us, so Slack needs no public URL here.

The same `take_in` / `take_action` as the HTTP endpoints run on what arrives; the envelope is acked first
(Slack wants it within 3 s) and the answer is a worker's job, as over HTTP.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from backend.channels.slack.inbound import take_action, take_in
from backend.integrations.models import Integration, IntegrationKind, Transport
from backend.integrations.services import health_error, slack_web

logger = logging.getLogger(__name__)


def _fingerprint(integration: Integration) -> str:
    # A changed token means a new connection; other edits (allow-list) are read from the row on each event.
    return f"{integration.app_token}|{integration.access_token}"


def _connected() -> dict[int, Integration]:
    found = Integration.objects.filter(kind=IntegrationKind.SLACK, transport=Transport.SOCKET).exclude(
        app_token="").exclude(access_token="").select_related("guru")
    return {integration.pk: integration for integration in found}


def _on_request(integration_id: int) -> Callable[[BaseSocketModeClient, SocketModeRequest], None]:
    def listener(client: BaseSocketModeClient, request: SocketModeRequest) -> None:
        client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        close_old_connections()  # the SDK calls listeners from its own threads
        try:
            integration = Integration.objects.select_related("guru").filter(pk=integration_id).first()
            if integration is None:
                return
            if request.type == "events_api":
                take_in(integration, request.payload)
            elif request.type == "interactive":
                take_action(integration, request.payload)
        finally:
            close_old_connections()
    return listener


@dataclass
class SocketSupervisor:
    """Keeps one connection per Socket Mode integration: opened when added, reopened when its tokens change."""

    clients: dict[int, tuple[str, SocketModeClient]] = field(default_factory=dict)
    stopping: threading.Event = field(default_factory=threading.Event)

    def _open(self, integration: Integration) -> None:
        web = slack_web(integration.access_token).client
        client = SocketModeClient(app_token=integration.app_token, web_client=web, auto_reconnect_enabled=True,
                                  logger=logging.getLogger("slack_sdk.socket_mode"))
        client.socket_mode_request_listeners.append(_on_request(integration.pk))
        client.on_error_listeners.append(lambda exc: health_error(
            integration=integration, message=f"Socket Mode connection: {type(exc).__name__}: {exc}"[:300]))
        try:
            client.connect()
        except Exception as exc:  # noqa: BLE001 - any failure to connect is reported on the tab and retried
            health_error(integration=integration, message=f"Socket Mode could not connect: {exc}"[:300])
            client.close()
            return
        self.clients[integration.pk] = (_fingerprint(integration), client)
        logger.info("Slack Socket Mode connected for %s", integration)

    def _close(self, pk: int) -> None:
        _, client = self.clients.pop(pk)
        client.close()
        logger.info("Slack Socket Mode closed for integration %s", pk)

    def rescan(self) -> None:
        close_old_connections()
        wanted = _connected()
        for pk in [pk for pk, (fp, _) in self.clients.items() if pk not in wanted or fp != _fingerprint(wanted[pk])]:
            self._close(pk)
        for pk, integration in wanted.items():
            if pk not in self.clients:
                self._open(integration)

    def run(self) -> None:
        logger.info("Slack Socket Mode process ready (rescanning every %s s)", settings.OPENGURU_SLACK_SOCKET_RESCAN_S)
        while not self.stopping.is_set():
            self.rescan()
            self.stopping.wait(settings.OPENGURU_SLACK_SOCKET_RESCAN_S)
        for pk in list(self.clients):
            self._close(pk)
