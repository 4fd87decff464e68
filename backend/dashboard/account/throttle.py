"""Failed-login throttling: per client address and per username, on the shared cache, so guessing stays slow."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from backend.core.ratelimit import client_ip

WINDOW_SECONDS = 15 * 60


def _keys(request: HttpRequest, username: str) -> list[str]:
    # The username counter slows a guesser spread over many addresses; the address counter one who tries
    # many usernames. A locked username unlocks by itself when the window ends.
    bucket = int(time.time() // WINDOW_SECONDS)
    return [f"login-fail:ip:{client_ip(request)}:{bucket}", f"login-fail:user:{username.strip().lower()}:{bucket}"]


def login_blocked_for(request: HttpRequest, username: str) -> int:
    """Seconds until another attempt is accepted; 0 when attempts are still allowed."""
    limit = settings.OPENGURU_LOGIN_FAILURE_LIMIT
    if limit <= 0:
        return 0
    counts = cache.get_many(_keys(request, username))
    if max(counts.values(), default=0) < limit:
        return 0
    return max(1, WINDOW_SECONDS - int(time.time() % WINDOW_SECONDS))


def login_failed(request: HttpRequest, username: str) -> None:
    """Count one failed attempt against the address and the username."""
    for key in _keys(request, username):
        # add() creates the counter atomically; incr() is atomic on Redis and the database cache alike.
        if not cache.add(key, 1, timeout=WINDOW_SECONDS + 1):
            cache.incr(key)
