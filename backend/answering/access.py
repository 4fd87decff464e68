"""Who may ask a guru: one rule for every channel (guru page, API, widget, MCP, bots)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet

from backend.core.errors import Forbidden, NotFound
from backend.gurus.models import Guru


@dataclass(frozen=True)
class Asker:
    """What a channel established about the caller before asking.

    `user`: the signed-in account (a session or an API key's owner). `maintainer_only`: the credential is a
    maintainer's tool (API keys, MCP over HTTP), valid only for gurus its user maintains. `key_guru_id`: the
    key is scoped to this one guru. `grant_guru_id`: a grant for one guru that the channel verified itself
    (a widget id from an allowed origin, a bot integration, the local operator's stdio MCP); it opens that
    guru whether public or private and nothing else.
    """

    user: User | AnonymousUser | None = None
    maintainer_only: bool = False
    key_guru_id: int | None = None
    grant_guru_id: int | None = None


def _maintains(user: User | AnonymousUser | None, guru: Guru) -> bool:
    if user is None or not user.is_authenticated:
        return False
    return bool(user.is_superuser or guru.maintainers.filter(pk=user.pk).exists())


def guru_check(guru: Guru, asker: Asker) -> None:
    """Forbidden unless this asker may ask this (active) guru."""
    if asker.grant_guru_id is not None:
        if asker.grant_guru_id != guru.pk:
            raise Forbidden("This credential is for another guru.")
        return
    if asker.key_guru_id is not None and asker.key_guru_id != guru.pk:
        raise Forbidden("This API key is scoped to another guru.")
    if asker.maintainer_only and not _maintains(asker.user, guru):
        raise Forbidden("You do not maintain this guru.")
    if guru.private and not _maintains(asker.user, guru):
        raise Forbidden("This guru is private.")


def guru_for_asker(slug: str, asker: Asker) -> Guru:
    """The active guru `slug` if the asker may ask it: NotFound (404) or Forbidden (403) otherwise."""
    guru = Guru.objects.filter(slug=slug, active=True).first() if isinstance(slug, str) else None
    if guru is None:
        raise NotFound(f"No guru '{str(slug)[:60]}'.")
    guru_check(guru, asker)
    return guru


def gurus_for_asker(asker: Asker) -> QuerySet[Guru]:
    """Every active guru the asker may ask, by name (the same rule as guru_check, as one query)."""
    gurus = Guru.objects.filter(active=True).order_by("name", "pk")
    if asker.grant_guru_id is not None:
        return gurus.filter(pk=asker.grant_guru_id)
    if asker.key_guru_id is not None:
        gurus = gurus.filter(pk=asker.key_guru_id)
    user = asker.user
    if user is not None and user.is_authenticated and user.is_superuser:
        return gurus
    maintained = Q(maintainers=user) if user is not None and user.is_authenticated else Q(pk__in=[])
    return gurus.filter(maintained if asker.maintainer_only else (maintained | Q(private=False))).distinct()
