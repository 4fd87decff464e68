"""API key write paths: keys are shown once and only their SHA-256 hash is stored."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils import timezone

from backend.api.models import APIKey
from backend.gurus.models import Guru

KEY_PREFIX = "og_"


@dataclass(frozen=True)
class IssuedKey:
    """A new key: `raw` is returned to the caller once and never stored."""

    api_key: APIKey
    raw: str


def api_key_hash(raw: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(raw.encode()).hexdigest()


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
