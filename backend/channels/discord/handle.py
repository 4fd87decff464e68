"""The listener's database side, run in threads: which guru a message is for, votes, health, place names."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from django.db import close_old_connections
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from backend.channels.chat.rules import EVERY_MESSAGE, MENTION
from backend.channels.discord.decide import Decision, Ignore, Incoming, Place, Rules, decide, pick
from backend.integrations.conversations import chat_reaction, chat_vote
from backend.integrations.discord_setup import discord_token
from backend.integrations.models import Integration, IntegrationKind, Thread


def rules_of(integration: Integration) -> Rules:
    channels = {str(c.get("id")): str(c.get("mode", "mention")) for c in integration.channels
                if isinstance(c, dict) and c.get("mode") in (MENTION, EVERY_MESSAGE)}
    return Rules(integration.bot_user_id, channels, integration.allow_dm)

HEALTH_EVERY = timedelta(seconds=30)
T = TypeVar("T")


async def in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a database step off the event loop (the ORM is synchronous), its connection closed afterwards.

    The threads that run these steps outlive them: a connection left open would stay open, one per thread.
    """
    def run() -> T:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()
    return await asyncio.to_thread(run)


def integrations_by_token() -> dict[str, list[int]]:
    """Every Discord integration with a token, grouped by token: one gateway connection per bot."""
    grouped: dict[str, list[int]] = {}
    for integration in Integration.objects.filter(kind=IntegrationKind.DISCORD).order_by("pk"):
        token = discord_token(integration)
        if token:
            grouped.setdefault(token, []).append(integration.pk)
    return grouped


def _loaded(ids: list[int]) -> dict[int, Integration]:
    return {i.pk: i for i in Integration.objects.filter(pk__in=ids, kind=IntegrationKind.DISCORD)
            .select_related("guru")}


def _seen(pk: int) -> None:
    """The tab's "last event", written at most every HEALTH_EVERY: a bot sees every message of its servers."""
    now = timezone.now()
    Integration.objects.filter(pk=pk).filter(Q(last_event_at__isnull=True) | Q(last_event_at__lt=now - HEALTH_EVERY)
                                             ).update(last_event_at=now)


@dataclass(frozen=True)
class Routed:
    integration: Integration | None
    decision: Decision


def route_message(ids: list[int], message: Incoming) -> Routed:
    """The guru a message is for (the thread's own, else the one allowing its channel) and what to do with it."""
    loaded = _loaded(ids)
    if not loaded:
        return Routed(None, Ignore("no integration uses this bot any more"))
    owner = None
    if message.place is Place.THREAD:
        owner = Thread.objects.filter(integration_id__in=loaded, external_thread_id=message.channel_id).values_list(
            "integration_id", flat=True).first()
    rules = {pk: rules_of(integration) for pk, integration in loaded.items()}
    chosen = loaded[owner if owner in loaded else (pick(rules, message) or min(loaded))]
    _seen(chosen.pk)
    decision = decide(message, rules[chosen.pk], known_thread=lambda key: owner == chosen.pk)
    return Routed(chosen, decision)


def route_command(ids: list[int], *, channel_id: str, parent_id: str, guru_slug: str,
                  dm: bool) -> tuple[Integration | None, str]:
    """The guru `/ask` is for (the one named, else the one allowing this channel), or the sentence saying why not."""
    loaded = _loaded(ids)
    checked = parent_id or channel_id
    allowed = [i for i in loaded.values() if (dm and i.allow_dm) or (not dm and checked in rules_of(i).channels)]
    if guru_slug:
        allowed = [i for i in allowed if i.guru.slug == guru_slug]
    if len(allowed) > 1:
        names = ", ".join(sorted(i.guru.name for i in allowed))
        return None, f"Several gurus answer here ({names}): choose one with the `guru` option."
    if not allowed:
        fallback = next(iter(loaded.values()), None)
        return None, not_allowed_text(fallback, dm=dm) if fallback else "No guru uses this bot any more."
    _seen(allowed[0].pk)
    return allowed[0], ""


def gurus_of(ids: list[int]) -> list[tuple[str, str]]:
    """(slug, name) of the gurus a bot serves, for `/ask`'s guru choice."""
    return sorted((i.guru.slug, i.guru.name) for i in _loaded(ids).values())


def vote(ids: list[int], *, question_id: int, value: int) -> bool:
    return any(chat_vote(integration=integration, question_id=question_id, value=value)
               for integration in _loaded(ids).values())


def reaction(ids: list[int], *, channel_id: str, message_id: str, value: int, removed: bool) -> bool:
    return any(chat_reaction(integration=integration, channel_id=channel_id, message_id=message_id,
                             value=None if removed else value, removed_value=value if removed else None)
               for integration in _loaded(ids).values())


def connected(ids: list[int], *, bot_user_id: str, bot_name: str, application_id: str,
              guilds: list[dict[str, str]]) -> None:
    """The gateway said READY (or the bot joined or left a server): what the Integrations tab shows."""
    Integration.objects.filter(pk__in=ids).update(bot_user_id=bot_user_id, workspace_name=bot_name[:200],
                                                  app_id=application_id, guilds=guilds,
                                                  last_event_at=timezone.now(), last_error="", last_error_at=None)


def failed(ids: list[int], message: str) -> None:
    Integration.objects.filter(pk__in=ids).update(last_error=message[:500], last_error_at=timezone.now())


def setup_link(integration: Integration) -> str:
    path = reverse("dashboard:integrations", args=[integration.guru.slug])
    return (integration.site_url.rstrip("/") + path) if integration.site_url else path


def not_allowed_text(integration: Integration, *, dm: bool) -> str:
    name, link = integration.guru.name, setup_link(integration)
    shown = f"[Integrations page](<{link}>)" if link.startswith("http") else "Integrations page"
    if dm:
        return f"{name} does not answer direct messages. A maintainer can turn them on on the {shown}."
    return f"I'm not set up to answer in this channel. A maintainer of {name} can allow it on the {shown}."
