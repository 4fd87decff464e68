"""Series keys and label values stay bounded, and the /metrics access rule (token or allowed address)."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.config.settings.components.metrics import metrics_networks
from backend.core import metrics
from backend.core.metrics_collector import scrape_status
from backend.core.metrics_store import KEY_LENGTH


def test_a_series_key_round_trips_and_unknown_keys_are_ignored() -> None:
    key = metrics.series_key(metrics.TASKS, "sources.index", "success")
    assert metrics.parse_series(key) == (metrics.TASKS, ("sources.index", "success"))
    for stale in ['["openguru_removed_metric","x"]', "not json", '["openguru_celery_tasks","only-one"]', "[1, 2]"]:
        assert metrics.parse_series(stale) is None
    with pytest.raises(ValueError):
        metrics.series_key(metrics.TASKS, "missing-outcome")


def test_label_values_are_printable_and_bounded_so_every_key_fits_the_store() -> None:
    assert metrics.label("a\nb\x00c") == "a_b_c" and metrics.label("  ") == "none"
    assert metrics.label("meta-llama/Llama-3.1-8B:q4@v2+x") == "meta-llama/Llama-3.1-8B:q4@v2+x"
    assert metrics.label("é" * 100) == "_" * metrics.LABEL_LENGTH
    for spec in (*metrics.COUNTERS, *metrics.GAUGES):
        # Worst case: every value past the bound and made of characters JSON would escape.
        key = metrics.series_key(spec, *(['"\\\u00e9' * 40] * len(spec.labels)))
        assert len(key) <= KEY_LENGTH - 40, spec.name


@pytest.fixture
def scrape(settings: SettingsWrapper) -> SettingsWrapper:
    settings.OPENGURU_METRICS_ALLOWED_IPS = metrics_networks(["127.0.0.1", "::1", "10.1.0.0/16"])
    settings.OPENGURU_METRICS_TOKEN = ""
    return settings


def test_without_a_token_only_allowed_addresses_may_scrape(scrape: SettingsWrapper) -> None:
    for address in ("127.0.0.1", "::1", "10.1.200.3"):
        assert scrape_status(address=address, authorization="") == 200, address
    for address in ("10.2.0.1", "203.0.113.9", "", "not-an-address"):
        assert scrape_status(address=address, authorization="Bearer anything") == 403, address


def test_with_a_token_anyone_presenting_it_may_scrape(scrape: SettingsWrapper) -> None:
    scrape.OPENGURU_METRICS_TOKEN = "s3cret-token"
    assert scrape_status(address="203.0.113.9", authorization="Bearer s3cret-token") == 200
    assert scrape_status(address="203.0.113.9", authorization="bearer s3cret-token") == 200
    for wrong in ("", "Bearer s3cret", "Basic s3cret-token", "Bearer s3cret-token-and-more"):
        assert scrape_status(address="203.0.113.9", authorization=wrong) == 401, wrong
    assert scrape_status(address="127.0.0.1", authorization="") == 200  # allowed addresses still need none


def test_allowed_addresses_must_be_addresses_or_networks() -> None:
    from django.core.exceptions import ImproperlyConfigured

    assert metrics_networks(["10.0.0.7", "fd00::/8"]) == ["10.0.0.7/32", "fd00::/8"]
    with pytest.raises(ImproperlyConfigured, match="OPENGURU_METRICS_ALLOWED_IPS"):
        metrics_networks(["prometheus.internal"])
