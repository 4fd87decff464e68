"""Read paths of the channels pages: the keys that work for a guru, its widget ids and its integrations."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import Http404

from backend.api.models import APIKey
from backend.gurus.models import Guru
from backend.integrations.models import Integration, IntegrationKind
from backend.widget.models import WidgetId


@dataclass(frozen=True)
class KeyRow:
    key: APIKey
    all_gurus: bool
    can_revoke: bool


def _keys_for(guru: Guru, user: User) -> QuerySet[APIKey]:
    """Keys scoped to this guru (anyone's) and the user's own all-gurus keys, which work here too."""
    return APIKey.objects.filter(Q(guru=guru) | Q(guru__isnull=True, user=user))


def _may_revoke(key: APIKey, guru: Guru, user: User) -> bool:
    # Integration keys belong to their Slack/Discord integration: revoking one here would break it silently.
    if key.for_integration:
        return False
    return key.user_id == user.pk or (getattr(user, "is_superuser", False) and key.guru_id == guru.pk)


def api_key_rows(*, guru: Guru, user: User) -> list[KeyRow]:
    """Working keys first, then revoked ones, newest first; one query."""
    keys = _keys_for(guru, user).select_related("user").order_by("revoked_at", "-created_at", "-pk")
    return [KeyRow(key=k, all_gurus=k.guru_id is None,
                   can_revoke=k.revoked_at is None and _may_revoke(k, guru, user)) for k in keys]


def api_key_revocable(*, guru: Guru, user: User, pk: int) -> APIKey:
    """A key this user may revoke from this guru's page; 404 for any other id (no hint that it exists)."""
    key = _keys_for(guru, user).filter(pk=pk).first()
    if key is None or not _may_revoke(key, guru, user):
        raise Http404("No such API key.")
    return key


def guru_widget_ids(*, guru: Guru) -> QuerySet[WidgetId]:
    return WidgetId.objects.filter(guru=guru).order_by("-created_at", "-pk")


def guru_widget_id(*, guru: Guru, pk: int) -> WidgetId:
    """One of this guru's widget ids; 404 for another guru's."""
    widget = guru_widget_ids(guru=guru).filter(pk=pk).first()
    if widget is None:
        raise Http404("No such widget id.")
    return widget


def preview_widget(widgets: list[WidgetId], wanted: str | None) -> WidgetId | None:
    """The widget id to preview: the one asked for (?preview=<id>), else the newest active one."""
    if wanted and wanted.isdigit():
        chosen = next((w for w in widgets if w.pk == int(wanted)), None)
        if chosen is not None:
            return chosen
    return next((w for w in widgets if w.active), None)


def guru_integrations(*, guru: Guru) -> dict[str, Integration | None]:
    """The Slack and the Discord integration of this guru (None when not connected)."""
    found = {i.kind: i for i in Integration.objects.filter(guru=guru).select_related("api_key")}
    return {kind: found.get(kind) for kind in IntegrationKind.values}
