"""Atomic expiring counters and leases for rate limits, the login lock-out and locks; the store is chosen by settings.

Every operation is one atomic statement (an upsert on SQLite/PostgreSQL, SET NX / MULTI on Redis), so
concurrent requests can neither lose a count nor both take a lease. Django's database cache could do
neither: its incr() reads then writes, its add() fails silently under write contention, and culling
past MAX_ENTRIES deletes live entries (locks first: their keys sort first).
"""

from __future__ import annotations

import hashlib
import time
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.db import connection, transaction
from django.utils.module_loading import import_string

from backend.core.models import Counter, Lease

_KEY_LENGTH = 200  # the primary key columns' max_length


class _OverLimit(Exception):
    """Rolls back increment_within's transaction."""


class CounterStore(Protocol):
    """What rate limits and locks need; DatabaseCounterStore and RedisCounterStore pass the same tests."""

    def increment(self, key: str, *, ttl: int, delta: int = 1) -> int:
        """Add `delta` to `key` (absent or expired counts as 0 and then lives `ttl` s); the new value."""
        ...

    def increment_within(self, keys: list[str], *, limit: int, ttl: int) -> bool:
        """Add one to every key unless that would take one past `limit`: all or nothing; whether it was added."""
        ...

    def claim(self, key: str, token: str, *, ttl: int) -> bool:
        """Take the lease `key` for `token` unless someone else holds it unexpired; whether it was taken."""
        ...

    def release(self, key: str, token: str) -> None:
        """Give the lease back if `token` still holds it (after an expiry another holder may)."""
        ...

    def renew(self, key: str, token: str, *, ttl: int) -> bool:
        """Make the lease `key` last `ttl` s from now if `token` still holds it; whether it does."""
        ...

    def holder(self, key: str) -> str | None:
        """The token holding the lease `key` unexpired, or None when it is free."""
        ...

    def take_over(self, key: str, old: str, token: str, *, ttl: int) -> bool:
        """Give the lease `key` to `token` for `ttl` s if `old` still holds it; whether it did."""
        ...


def _stored_key(key: str) -> str:
    # Keys embed usernames and addresses; a long one keeps a readable head and a collision-free hash.
    if len(key) <= _KEY_LENGTH:
        return key
    return f"{key[:_KEY_LENGTH - 65]}#{hashlib.sha256(key.encode()).hexdigest()}"


class DatabaseCounterStore:
    """Counter and Lease rows, each change one INSERT … ON CONFLICT … RETURNING (SQLite >= 3.35, PostgreSQL)."""

    def _names(self, model: type[Counter] | type[Lease], *columns: str) -> list[str]:
        return [connection.ops.quote_name(name) for name in (model._meta.db_table, *columns)]

    def _upsert(self, key: str, *, ttl: int, delta: int, now: float) -> int:
        table, key_col, count, expires = self._names(Counter, "key", "count", "expires_at")
        expired = f"{table}.{expires} <= %s"
        sql = (f"INSERT INTO {table} ({key_col}, {count}, {expires}) VALUES (%s, %s, %s) "
               f"ON CONFLICT ({key_col}) DO UPDATE SET "
               f"{count} = CASE WHEN {expired} THEN excluded.{count} ELSE {table}.{count} + excluded.{count} END, "
               f"{expires} = CASE WHEN {expired} THEN excluded.{expires} ELSE {table}.{expires} END "
               f"RETURNING {count}")
        with connection.cursor() as cursor:
            cursor.execute(sql, [_stored_key(key), delta, now + ttl, now, now])
            return int(cursor.fetchall()[0][0])

    def _purge(self, now: float) -> None:
        # Called when a new window began for some key: a good moment to drop the rows of finished windows.
        Counter.objects.filter(expires_at__lt=now).delete()

    def increment(self, key: str, *, ttl: int, delta: int = 1) -> int:
        now = time.time()
        value = self._upsert(key, ttl=ttl, delta=delta, now=now)
        if value == delta:
            self._purge(now)
        return value

    def increment_within(self, keys: list[str], *, limit: int, ttl: int) -> bool:
        now = time.time()
        try:
            # The upserts lock their rows until commit (SQLite: the IMMEDIATE transaction locks the database),
            # so concurrent callers queue; sorted keys keep PostgreSQL from deadlocking.
            with transaction.atomic():
                values = [self._upsert(key, ttl=ttl, delta=1, now=now) for key in sorted(set(keys))]
                if max(values, default=0) > limit:
                    raise _OverLimit
        except _OverLimit:
            return False
        if 1 in values:
            self._purge(now)
        return True

    def claim(self, key: str, token: str, *, ttl: int) -> bool:
        now = time.time()
        table, key_col, token_col, expires = self._names(Lease, "key", "token", "expires_at")
        # DO UPDATE … WHERE takes over only an expired lease; a live one makes the statement return no row.
        sql = (f"INSERT INTO {table} ({key_col}, {token_col}, {expires}) VALUES (%s, %s, %s) "
               f"ON CONFLICT ({key_col}) DO UPDATE SET {token_col} = excluded.{token_col}, "
               f"{expires} = excluded.{expires} WHERE {table}.{expires} <= %s RETURNING {token_col}")
        with connection.cursor() as cursor:
            cursor.execute(sql, [_stored_key(key), token, now + ttl, now])
            return bool(cursor.fetchall())

    def release(self, key: str, token: str) -> None:
        Lease.objects.filter(key=_stored_key(key), token=token).delete()

    def renew(self, key: str, token: str, *, ttl: int) -> bool:
        return Lease.objects.filter(key=_stored_key(key), token=token).update(expires_at=time.time() + ttl) == 1

    def holder(self, key: str) -> str | None:
        rows = Lease.objects.filter(key=_stored_key(key), expires_at__gt=time.time())
        return rows.values_list("token", flat=True).first()

    def take_over(self, key: str, old: str, token: str, *, ttl: int) -> bool:
        rows = Lease.objects.filter(key=_stored_key(key), token=old)
        return rows.update(token=token, expires_at=time.time() + ttl) == 1


class RedisCounterStore:
    """Keys in REDIS_URL's database: INCRBY after SET NX EX in one MULTI, Lua for check-and-add, SET NX EX."""

    PREFIX = "openguru:atomic:"
    # Compare-and-delete in one step: a GET then DEL could delete a lease that expired and was re-taken.
    _RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
    # A script runs atomically: no other command sees the keys between the check and the increments.
    _WITHIN = """
    for _, key in ipairs(KEYS) do
      if tonumber(redis.call('get', key) or '0') + 1 > tonumber(ARGV[1]) then return 0 end
    end
    for _, key in ipairs(KEYS) do
      if redis.call('incr', key) == 1 then redis.call('expire', key, ARGV[2]) end
    end
    return 1
    """
    _RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('expire', KEYS[1], ARGV[2]) end return 0"
    _TAKE_OVER = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
                  "redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end return 0")

    def __init__(self, url: str = "") -> None:
        import redis

        self._client = redis.Redis.from_url(url or settings.REDIS_URL)
        self._release = self._client.register_script(self._RELEASE)
        self._within = self._client.register_script(self._WITHIN)
        self._renew = self._client.register_script(self._RENEW)
        self._take_over = self._client.register_script(self._TAKE_OVER)

    def increment(self, key: str, *, ttl: int, delta: int = 1) -> int:
        name = self.PREFIX + key
        pipe = self._client.pipeline(transaction=True)
        pipe.set(name, 0, ex=ttl, nx=True)
        pipe.incrby(name, delta)
        _, value = pipe.execute()
        return int(value)

    def increment_within(self, keys: list[str], *, limit: int, ttl: int) -> bool:
        names = [self.PREFIX + key for key in dict.fromkeys(keys)]
        return bool(self._within(keys=names, args=[limit, ttl]))

    def claim(self, key: str, token: str, *, ttl: int) -> bool:
        return bool(self._client.set(self.PREFIX + key, token, ex=ttl, nx=True))

    def release(self, key: str, token: str) -> None:
        self._release(keys=[self.PREFIX + key], args=[token])

    def renew(self, key: str, token: str, *, ttl: int) -> bool:
        return bool(self._renew(keys=[self.PREFIX + key], args=[token, ttl]))

    def holder(self, key: str) -> str | None:
        value = self._client.get(self.PREFIX + key)
        return value.decode() if isinstance(value, bytes) else value

    def take_over(self, key: str, old: str, token: str, *, ttl: int) -> bool:
        return bool(self._take_over(keys=[self.PREFIX + key], args=[old, token, ttl]))


@lru_cache(maxsize=4)
def _build(path: str) -> CounterStore:
    store: CounterStore = import_string(path)()
    return store


def counter_store() -> CounterStore:
    """The configured store (settings.OPENGURU_COUNTER_STORE), one instance per process."""
    return _build(settings.OPENGURU_COUNTER_STORE)
