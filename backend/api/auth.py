"""X-API-KEY authentication, guru scoping and per-key rate limits for the REST API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from backend.answering.access import Asker, guru_for_asker
from backend.api.models import APIKey
from backend.api.services import api_key_use
from backend.core.ratelimit import client_ip, hit
from backend.gurus.models import Guru

HEADER = "X-API-KEY"
ANONYMOUS_LIMIT = 30


class APIKeyAuthentication(BaseAuthentication):
    """`X-API-KEY: og_…` → (the key's user, the APIKey). Unknown or revoked keys are a 401."""

    def authenticate(self, request: Request) -> tuple[User, APIKey] | None:
        raw = request.headers.get(HEADER, "").strip()
        if not raw:
            return None
        key = api_key_use(raw)
        if key is None:
            raise AuthenticationFailed("Invalid or revoked API key.")
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return HEADER  # makes DRF answer 401 (not 403) when the key is missing


def guru_for(request: Request, slug: str) -> Guru:
    """The guru named in the URL, if this key or user may use it (404 unknown, 403 out of scope): an API
    credential is a maintainer's, the rule every channel shares (backend.answering.access)."""
    key = request.auth if isinstance(request.auth, APIKey) else None
    return guru_for_asker(slug, Asker(user=request.user, maintainer_only=True,
                                      key_guru_id=key.guru_id if key is not None else None))


def signed_in_user(request: Request) -> User:
    """The caller's account: an API key's user or a session user (views require one, so anonymous is a 401)."""
    user = request.user
    if not user.is_authenticated:
        raise NotAuthenticated()
    return user


class KeyRateThrottle(BaseThrottle):
    """Each key's own requests-per-minute; session users and anonymous calls are limited per IP."""

    def __init__(self) -> None:
        self._wait = 0

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth if isinstance(request.auth, APIKey) else None
        if key is not None:
            decision = hit(f"api-key:{key.pk}", limit=key.rate_limit_per_minute)
        else:
            decision = hit(f"api-ip:{client_ip(request)}", limit=ANONYMOUS_LIMIT)
        self._wait = decision.retry_after
        return decision.allowed

    def wait(self) -> float | None:
        return float(self._wait) if self._wait else None
