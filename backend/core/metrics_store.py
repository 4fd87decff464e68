"""Where every process's metric counts meet: Counter rows in the database, or Redis hashes; chosen by settings.

Counters only grow: each process adds its deltas (one transaction or one MULTI per publish), so a scrape
served by any web process reads the same totals, and they outlive restarts. Gauges (streams in flight)
are per process: each publishes its current values under its own instance id with an expiry, and a
reader sums the unexpired ones, so a process that died stops counting within the expiry.
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from redis.typing import EncodableT, FieldT

from backend.core.models import Counter

KEY_LENGTH = 200  # Counter.key's max_length; metrics.series_key keeps keys well below it
_NEVER = 1e15  # expires_at of counter rows: they never expire (the rate-limit purge leaves them alone)
_BATCH = 300  # rows per INSERT: far below every database's limit on statement parameters


class MetricsStore(Protocol):
    """What metrics.py publishes to and the /metrics collector reads; both stores pass the same tests."""

    def publish(self, counts: Mapping[str, int], gauges: Mapping[str, int] | None, *, instance: str,
                ttl: float) -> None:
        """Add `counts` to the totals and, unless None, make `gauges` this instance's values for `ttl` s.

        All of it or nothing, so a reader never sees half of one publish.
        """
        ...

    def totals(self) -> dict[str, int]:
        """Every counter's total over all processes, by series key."""
        ...

    def live(self) -> dict[str, int]:
        """Every gauge summed over the instances whose values have not expired, by series key."""
        ...


class DatabaseMetricsStore:
    """`metric:<series>` Counter rows that never expire, and `metric-live:<instance>:<series>` rows that do."""

    COUNTERS = "metric:"
    LIVE = "metric-live:"

    def publish(self, counts: Mapping[str, int], gauges: Mapping[str, int] | None, *, instance: str,
                ttl: float) -> None:
        now = time.time()
        with transaction.atomic():
            items = [(self.COUNTERS + key, delta) for key, delta in counts.items() if delta]
            for start in range(0, len(items), _BATCH):
                self._add(items[start:start + _BATCH])
            if gauges is not None:
                self._set_live(instance, gauges, expires_at=now + ttl, now=now)

    def _add(self, items: list[tuple[str, int]]) -> None:
        table, key, count, expires = (connection.ops.quote_name(name) for name in
                                      (Counter._meta.db_table, "key", "count", "expires_at"))
        values = ", ".join(["(%s, %s, %s)"] * len(items))
        sql = (f"INSERT INTO {table} ({key}, {count}, {expires}) VALUES {values} "
               f"ON CONFLICT ({key}) DO UPDATE SET {count} = {table}.{count} + excluded.{count}")
        with connection.cursor() as cursor:
            cursor.execute(sql, [value for name, delta in items for value in (name, delta, _NEVER)])

    def _set_live(self, instance: str, gauges: Mapping[str, int], *, expires_at: float, now: float) -> None:
        own = f"{self.LIVE}{instance}:"
        rows = [Counter(key=own + key, count=value, expires_at=expires_at) for key, value in gauges.items() if value]
        # Rows of processes that died without cleaning up, and this process's gauges that went back to 0.
        Counter.objects.filter(key__startswith=self.LIVE, expires_at__lte=now).delete()
        Counter.objects.filter(key__startswith=own).exclude(key__in=[row.key for row in rows]).delete()
        if rows:
            Counter.objects.bulk_create(rows, update_conflicts=True, unique_fields=["key"],
                                        update_fields=["count", "expires_at"])

    def totals(self) -> dict[str, int]:
        rows = Counter.objects.filter(key__startswith=self.COUNTERS).values_list("key", "count")
        return {key.removeprefix(self.COUNTERS): count for key, count in rows}

    def live(self) -> dict[str, int]:
        summed: Tally[str] = Tally()
        rows = Counter.objects.filter(key__startswith=self.LIVE, expires_at__gt=time.time()).values_list("key", "count")
        for key, count in rows:
            summed[key.removeprefix(self.LIVE).partition(":")[2]] += count  # drop the instance id
        return dict(summed)


class RedisMetricsStore:
    """One hash of totals (HINCRBY) and one expiring hash per instance for its gauges, in REDIS_URL's database."""

    COUNTERS = "openguru:metrics:counters"
    LIVE = "openguru:metrics:live:"

    def __init__(self, url: str = "") -> None:
        import redis

        # A scrape or a publish must fail soon, not hang, when Redis is away (both log and carry on).
        self._client = redis.Redis.from_url(url or settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)

    def publish(self, counts: Mapping[str, int], gauges: Mapping[str, int] | None, *, instance: str,
                ttl: float) -> None:
        pipe = self._client.pipeline(transaction=True)
        for key, delta in counts.items():
            if delta:
                pipe.hincrby(self.COUNTERS, key, delta)
        if gauges is not None:
            own = self.LIVE + instance
            pipe.delete(own)
            nonzero: dict[FieldT, EncodableT] = {key: value for key, value in gauges.items() if value}
            if nonzero:
                pipe.hset(own, mapping=nonzero)
                pipe.pexpire(own, max(1, int(ttl * 1000)))
        pipe.execute()

    def totals(self) -> dict[str, int]:
        return {_text(key): int(value) for key, value in self._client.hgetall(self.COUNTERS).items()}

    def live(self) -> dict[str, int]:
        keys = list(self._client.scan_iter(match=self.LIVE + "*", count=500))
        pipe = self._client.pipeline(transaction=False)
        for key in keys:
            pipe.hgetall(key)
        summed: Tally[str] = Tally()
        for values in pipe.execute() if keys else []:
            for key, value in values.items():
                summed[_text(key)] += int(value)
        return dict(summed)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@lru_cache(maxsize=4)
def _build(path: str) -> MetricsStore:
    store: MetricsStore = import_string(path)()
    return store


def metrics_store() -> MetricsStore:
    """The configured store (settings.OPENGURU_METRICS_STORE), one instance per process."""
    return _build(settings.OPENGURU_METRICS_STORE)
