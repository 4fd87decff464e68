"""Prometheus /metrics: where the shared counters live, how often processes publish them, and who may scrape."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from backend.config.env import env_int, env_list, env_str, ip_networks

# Counters from every process (web workers, Celery workers, beat) are summed in the store the processes
# already share: Redis when REDIS_URL is set, else the database (backend/core/metrics_store.py).
OPENGURU_METRICS_STORE = (
    "backend.core.metrics_store.RedisMetricsStore" if env_str("REDIS_URL")
    else "backend.core.metrics_store.DatabaseMetricsStore"
)
# Each process counts in memory and publishes its counts this often (one write per process per period,
# none while idle), so a request never waits on the store. 0: publish only when this process is scraped.
OPENGURU_METRICS_FLUSH_SECONDS = env_int("OPENGURU_METRICS_FLUSH_SECONDS", 5)
if OPENGURU_METRICS_FLUSH_SECONDS < 0:
    raise ImproperlyConfigured("OPENGURU_METRICS_FLUSH_SECONDS must be 0 or more")
# Anyone presenting `Authorization: Bearer <token>` may scrape; without it only these addresses may.
OPENGURU_METRICS_TOKEN = env_str("OPENGURU_METRICS_TOKEN")


def metrics_networks(values: list[str]) -> list[str]:
    """Addresses and networks (CIDR), normalised; anything else fails fast."""
    return ip_networks(values, setting="OPENGURU_METRICS_ALLOWED_IPS", example="10.0.0.0/8")


OPENGURU_METRICS_ALLOWED_IPS = metrics_networks(env_list("OPENGURU_METRICS_ALLOWED_IPS", ["127.0.0.1", "::1"]))
