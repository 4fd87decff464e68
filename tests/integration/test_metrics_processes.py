"""Counts from several real web processes add up in every scrape, never go down, and outlive the processes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.metrics import Samples, parse
from tests.support.web_process import WebProcess, web_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile, pytest.mark.slow]
REQUESTS = 60
HEALTH = {"method": "GET", "route": "healthz", "status": "2xx"}


def _scrape(web: WebProcess) -> Samples:
    response = httpx.get(f"{web.url}/metrics", timeout=30)
    assert response.status_code == 200, response.text[:300]
    return parse(response.text)


def _burst(web: WebProcess, count: int) -> None:
    def one(_: int) -> int:
        with httpx.Client(timeout=60) as client:  # a connection each, so both worker processes get some
            return client.get(f"{web.url}/healthz").status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        assert set(pool.map(one, range(count))) == {200}


def test_two_web_workers_report_one_total_that_only_grows(tmp_path: Path) -> None:
    with web_process(tmp_path / "web", workers=2, extra_env={"OPENGURU_METRICS_FLUSH_SECONDS": "1"}) as web:
        start = _scrape(web).get("openguru_http_requests_total", **HEALTH)
        _burst(web, REQUESTS)
        seen = [start]
        deadline = time.monotonic() + 30
        # Each worker publishes its counts within a second; a scrape served by either one sums both.
        while seen[-1] < start + REQUESTS and time.monotonic() < deadline:
            seen.append(_scrape(web).get("openguru_http_requests_total", **HEALTH))
        assert seen[-1] == start + REQUESTS, seen
        assert seen == sorted(seen)  # a counter that went down would look like a restart to Prometheus
        for _ in range(5):
            assert _scrape(web).get("openguru_http_requests_total", **HEALTH) == start + REQUESTS


def test_a_web_process_that_stops_publishes_its_last_counts(tmp_path: Path) -> None:
    # A period far longer than the test: only the publish at a clean exit can bring these counts in.
    slow = {"OPENGURU_METRICS_FLUSH_SECONDS": "3600"}
    with web_process(tmp_path / "web", workers=1, extra_env=slow) as web:
        start = _scrape(web).get("openguru_http_requests_total", **HEALTH)
        _burst(web, 10)
    with web_process(tmp_path / "web", workers=1, extra_env=slow) as again:
        assert _scrape(again).get("openguru_http_requests_total", **HEALTH) == start + 10
