"""What both transports do with what Slack sends: verify (HTTP), take each event in once, queue the work."""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import Q
from slack_sdk.signature import SignatureVerifier

from backend.channels.slack.blocks import FEEDBACK_ACTION, parse_feedback_value
from backend.channels.slack.decide import Ask, NotAllowed, React, Rules, decide
from backend.channels.slack.reply import answer_in_thread, say_not_allowed
from backend.core.tasks import enqueue_on_commit
from backend.integrations.conversations import (
    chat_reaction,
    chat_vote,
    event_first_seen,
    thread_known,
)
from backend.integrations.models import Integration, IntegrationKind
from backend.integrations.services import health_event, integration_uninstalled

logger = logging.getLogger(__name__)
EVENT_TASK = "channels.slack_event"
GONE = {"app_uninstalled": "The app was uninstalled from the workspace.",
        "tokens_revoked": "The workspace revoked the bot's token."}


def verified_integration(body: bytes, headers: dict[str, str], team_id: str, app_id: str) -> Integration | None:
    """The Slack integration whose signing secret signed this request (5-minute window, constant time), or None."""
    timestamp, signature = headers.get("x-slack-request-timestamp", ""), headers.get("x-slack-signature", "")
    if not timestamp or not signature:
        return None
    candidates = Integration.objects.filter(kind=IntegrationKind.SLACK).exclude(signing_secret="")
    if team_id:
        candidates = candidates.filter(Q(external_id=team_id) | Q(external_id=""))
    if app_id:
        candidates = candidates.filter(Q(app_id=app_id) | Q(app_id=""))
    for integration in candidates.select_related("guru")[:50]:
        if SignatureVerifier(integration.signing_secret).is_valid(body, timestamp, signature):
            return integration
    return None


def take_in(integration: Integration, payload: dict[str, Any]) -> None:
    """An `event_callback`: counted once by event id, then answered by a worker (never in this request)."""
    health_event(integration=integration)
    event = payload.get("event")
    if payload.get("type") != "event_callback" or not isinstance(event, dict):
        return
    if event.get("type") in GONE:
        integration_uninstalled(integration=integration, why=GONE[str(event["type"])])
        return
    if not event_first_seen(integration=integration, event_id=str(payload.get("event_id") or "")):
        logger.info("Slack event %s already taken in (a retry)", payload.get("event_id"))
        return
    enqueue_on_commit(EVENT_TASK, integration_id=integration.pk, event=event, team=str(payload.get("team_id", "")))


def take_action(integration: Integration, payload: dict[str, Any]) -> None:
    """Interactivity: a 👍/👎 feedback button pressed under an answer."""
    health_event(integration=integration)
    if payload.get("type") != "block_actions":
        return
    for action in payload.get("actions") or []:
        if isinstance(action, dict) and action.get("action_id") == FEEDBACK_ACTION:
            parsed = parse_feedback_value(str(action.get("value", "")))
            if parsed is not None:
                chat_vote(integration=integration, question_id=parsed[1], value=parsed[0])


def rules_of(integration: Integration) -> Rules:
    channels = {str(c.get("id")): str(c.get("mode", "mention")) for c in integration.channels if isinstance(c, dict)}
    return Rules(integration.bot_user_id, channels, integration.allow_dm)


def _react(integration: Integration, reaction: React) -> None:
    chat_reaction(integration=integration, channel_id=reaction.channel, message_id=reaction.message_ts,
                  value=reaction.value, removed_value=reaction.removed_value)


def handle_event(integration: Integration, event: dict[str, Any], team: str) -> str:
    """The worker's part: decide, then answer, refuse or count the reaction. Returns what was done."""
    if not integration.access_token:
        return "ignored: the integration has no token (uninstalled)"
    decision = decide(event, rules_of(integration), team=team,
                      known_thread=lambda key: thread_known(integration=integration, key=key))
    if isinstance(decision, NotAllowed):
        say_not_allowed(integration=integration, refused=decision)
        return "refused: not allowed here"
    if isinstance(decision, React):
        _react(integration, decision)
        return "reaction counted"
    if isinstance(decision, Ask):
        answer_in_thread(integration=integration, ask=decision)
        return "answered"
    return f"ignored: {decision.reason}"
