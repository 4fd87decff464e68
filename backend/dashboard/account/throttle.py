"""Failed-login throttling: per client address and per username, on the counter store, so guessing stays slow."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings
from django.http import HttpRequest

from backend.core.counters import counter_store
from backend.core.ratelimit import client_ip

WINDOW_SECONDS = 15 * 60


def _keys(request: HttpRequest, username: str) -> list[str]:
    # The username counter slows a guesser spread over many addresses; the address counter one who tries
    # many usernames. A locked username unlocks by itself when the window ends.
    bucket = int(time.time() // WINDOW_SECONDS)
    return [f"login-fail:ip:{client_ip(request)}:{bucket}", f"login-fail:user:{username.strip().lower()}:{bucket}"]


def _give_back(keys: list[str]) -> None:
    store = counter_store()
    for key in keys:
        store.increment(key, ttl=WINDOW_SECONDS + 1, delta=-1)


@dataclass(frozen=True)
class LoginAttempt:
    """One counted attempt: refused for `retry_after` seconds (0 = go ahead) and the counters it went to."""

    retry_after: int
    keys: list[str] = field(default_factory=list)


def login_attempt(request: HttpRequest, username: str) -> LoginAttempt:
    """Count this attempt before the password is checked; refused when that spends a limit.

    Counting first (atomically, before the check) is what makes the limit hold against concurrent guesses:
    checking first would let a burst through before any failure is recorded.
    """
    limit = settings.OPENGURU_LOGIN_FAILURE_LIMIT
    if limit <= 0:
        return LoginAttempt(0)
    keys = _keys(request, username)
    # All or nothing: a refused attempt counts nowhere, so it cannot crowd out one that is within the limit.
    if counter_store().increment_within(keys, limit=limit, ttl=WINDOW_SECONDS + 1):
        return LoginAttempt(0, keys)
    return LoginAttempt(max(1, WINDOW_SECONDS - int(time.time() % WINDOW_SECONDS)))


def login_succeeded(attempt: LoginAttempt) -> None:
    """The password was right: give back its attempt (to the same window's counters), so only failures add up."""
    _give_back(attempt.keys)
