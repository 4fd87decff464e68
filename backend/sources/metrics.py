"""The sources part of a /metrics scrape: data sources by kind and ingestion status."""

from __future__ import annotations

from prometheus_client.core import GaugeMetricFamily, Metric

from backend.sources.selectors import source_totals_by_kind_and_status


def source_metric_families() -> list[Metric]:
    """One gauge, every (kind, status) pair present; core.metrics_collector calls it at scrape time."""
    family = GaugeMetricFamily("openguru_sources", "Data sources by kind and ingestion status.",
                               labels=["kind", "status"])
    for (kind, status), count in sorted(source_totals_by_kind_and_status().items()):
        family.add_metric([kind.lower(), status.lower()], count)
    return [family]
