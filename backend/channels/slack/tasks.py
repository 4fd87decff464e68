"""The Celery task that answers a Slack event, so the HTTP request (or socket ack) returns within Slack's 3 s."""

from __future__ import annotations

from typing import Any

from backend.channels.slack.inbound import EVENT_TASK, handle_event
from backend.core.tasks import openguru_task
from backend.integrations.models import Integration


@openguru_task(EVENT_TASK, acks_late=False, max_retries=0)
def slack_event(self: Any, *, integration_id: int, event: dict[str, Any], team: str) -> str:
    # Not acks_late and not retried: an answer half posted to a thread must not be posted again.
    integration = Integration.objects.select_related("guru").filter(pk=integration_id).first()
    if integration is None:
        return "ignored: the integration was removed"
    return handle_event(integration, event, team)
