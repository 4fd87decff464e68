"""What a /metrics scrape returns: the shared counters and gauges, broker queue depth and source states.

A prometheus_client Collector reads them at scrape time; one part failing (Redis away, say) is logged
and reported as `openguru_scrape_part_up{part} 0`, and the others are still served.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from backend.core import metrics
from backend.core.metrics_store import metrics_store

logger = logging.getLogger(__name__)
BROKER_TIMEOUT_S = 3


# Parts other apps add (sources.apps: source counts); core depends on no app, so they are handed in.
_PARTS: dict[str, Callable[[], list[Metric]]] = {}


def register_part(name: str, read: Callable[[], list[Metric]]) -> None:
    """Serve `read()`'s families in every scrape, reported as `openguru_scrape_part_up{part=name}`."""
    _PARTS[name] = read


def scrape_status(*, address: str, authorization: str) -> int:
    """200 when this client may scrape; else 401 (a token is configured: ask for it) or 403.

    Allowed: `Authorization: Bearer <OPENGURU_METRICS_TOKEN>` from anywhere, or no token from an address
    in OPENGURU_METRICS_ALLOWED_IPS (loopback by default). The address is the one the ASGI layer settled
    on, so X-Forwarded-For counts only from OPENGURU_TRUSTED_PROXIES.
    """
    token: str = settings.OPENGURU_METRICS_TOKEN
    scheme, _, given = authorization.partition(" ")
    if token and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return 200
    try:
        client = ipaddress.ip_address(address)
    except ValueError:
        client = None
    allowed = [ipaddress.ip_network(net) for net in settings.OPENGURU_METRICS_ALLOWED_IPS]
    if client is not None and any(client in network for network in allowed):
        return 200
    return 401 if token else 403


def render(accept: str = "") -> tuple[bytes, str]:
    """The exposition (Prometheus text, or OpenMetrics when `accept` asks for it) and its content type."""
    metrics.publish()  # this process's own counts first: totals then include the process serving the scrape
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SharedCollector())
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


class SharedCollector:
    """Reads everything at collect() time; holds no state between scrapes."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("openguru_scrape_part_up", "Whether this part of the scrape could be read (1) or "
                               "not (0; see the web log).", labels=["part"])
        for part, read in (("store", _store_families), ("broker", _queue_families), *_PARTS.items()):
            families = _attempt(part, read)
            up.add_metric([part], 0 if families is None else 1)
            yield from families or []
        yield up

    def describe(self) -> list[Metric]:
        return []  # nothing to check at registration; names are fixed in metrics.py


def _attempt(part: str, read: Callable[[], list[Metric]]) -> list[Metric] | None:
    try:
        return read()
    except Exception as exc:  # the boundary of one part: log it, serve the others
        logger.warning("metrics: could not read the %s for /metrics: %s", part, exc)
        return None


def _store_families() -> list[Metric]:
    store = metrics_store()
    totals, live = store.totals(), store.live()
    counters = {spec.name: CounterMetricFamily(spec.name, spec.help, labels=spec.labels) for spec in metrics.COUNTERS}
    gauges = {spec.name: GaugeMetricFamily(spec.name, spec.help, labels=spec.labels) for spec in metrics.GAUGES}
    for key, total in sorted(totals.items()):
        parsed = metrics.parse_series(key)
        if parsed is not None and parsed[0].name in counters:
            counters[parsed[0].name].add_metric(list(parsed[1]), total)
    for spec in metrics.GAUGES:
        if not spec.labels:  # always present, 0 when no process reports one
            gauges[spec.name].add_metric([], live.get(metrics.series_key(spec), 0))
    return [*counters.values(), *gauges.values()]


def _queue_families() -> list[Metric]:
    from kombu.exceptions import ChannelError

    from backend.config.celery_app import app

    ready = GaugeMetricFamily("openguru_queue_messages", "Messages waiting in the broker for a worker, by queue.",
                              labels=["queue"])
    unacked = GaugeMetricFamily("openguru_queue_unacked_messages", "Messages workers took and have not "
                                "acknowledged yet (running, reserved or prefetched).")
    names = sorted({*app.amqp.queues, app.conf.task_default_queue})
    with app.connection_for_read(connect_timeout=BROKER_TIMEOUT_S) as conn:
        conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_S)
        channel: Any = conn.default_channel  # a kombu virtual channel: queue_declare(passive=True) counts
        for name in names:
            try:
                count = channel.queue_declare(queue=name, passive=True).message_count
            except ChannelError:  # never declared (Redis: an empty list does not exist): nothing waits
                count = 0
            ready.add_metric([name], count)
        unacked.add_metric([], _unacked(channel))
    return [ready, unacked]


def _unacked(channel: Any) -> int:
    folder = getattr(channel, "unacked_folder", None)
    if isinstance(folder, Path):  # the embedded broker: one folder of claimed messages per consumer
        return sum(1 for _ in folder.glob("*/*.msg"))
    # kombu's Redis transport keeps unacknowledged deliveries in one hash (global key prefix applied).
    return int(channel.client.hlen(channel.unacked_key))
