"""API key write paths: keys are shown once and only their SHA-256 hash is stored."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from backend.api.models import APIKey
from backend.gurus.models import Guru

KEY_PREFIX = "og_"
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class IssuedKey:
    """A new key: `raw` is returned to the caller once and never stored."""

    api_key: APIKey
    raw: str


def api_key_hash(raw: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(raw.encode()).hexdigest()


def api_key_use(raw: str) -> APIKey | None:
    """The live key `raw` names (its user loaded), marked as used; None if unknown, revoked or its user inactive.

    Every channel that takes API keys (REST API, MCP) checks them here."""
    key = APIKey.objects.select_related("user").filter(key_hash=api_key_hash(raw)).first()
    if key is None or key.revoked_at is not None or not key.user.is_active:
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        # Written at most once a minute, so a busy key does not turn every request into a write.
        APIKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def api_key_create(
    *, user: User, name: str, guru: Guru | None = None, rate_limit_per_minute: int = 60
) -> IssuedKey:
    """Issue a key for one guru, or for all the user's gurus when guru is None."""
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = APIKey.objects.create(
        user=user,
        guru=guru,
        name=name,
        prefix=raw[:10],
        key_hash=api_key_hash(raw),
        rate_limit_per_minute=rate_limit_per_minute,
    )
    return IssuedKey(api_key=api_key, raw=raw)


def api_key_revoke(*, api_key: APIKey) -> None:
    """Revoke a key; idempotent."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
