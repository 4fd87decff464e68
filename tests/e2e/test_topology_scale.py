"""Scale-out in the running topology: a rate limit counted across both uvicorn workers, tasks taken by both
Celery workers, and a lock held outside the workers that they wait for; all of it lives in Redis."""

from __future__ import annotations

import os
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis

from backend.adapters.llm.fake import ScriptedReply
from backend.core.counters import RedisCounterStore
from backend.gurus.services import collection_lock_name
from tests.e2e.conftest import SLUG, WEB_RATE_LIMIT, Deployment, fresh_address, source_status, visitor
from tests.support.product import eventually
from tests.support.topology import Topology

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's data stores"),
]
BURST = WEB_RATE_LIMIT + 4
PAGES = ["/docs/config", "/docs/quickstart", "/blog/scheduler", "/docs/"]
RETRIED = re.compile(r"gurus\.collection_sync\[[^\]]+\] retry: Retry in \d+s: LockNotAcquired")


def _ready_visitors(topology: Topology, address: str) -> list[httpx.Client]:
    """Visitors from one address that already hold the guru page's CSRF cookie (so the burst is POSTs only)."""
    clients = [visitor(topology.nginx_url, address) for _ in range(BURST)]
    for client in clients:
        client.get(f"/g/{SLUG}/").raise_for_status()
    return clients


def _ask(client: httpx.Client, question: str) -> int:
    try:
        response = client.post(f"/g/{SLUG}/ask/", json={"question": question},
                               headers={"X-CSRFToken": client.cookies["csrftoken"]})
        return response.status_code
    finally:
        client.close()


def _burst(topology: Topology, attempt: int) -> tuple[list[int], set[int], str]:
    """BURST concurrent questions from one fresh address: their statuses, the uvicorn workers that held
    connections opened for them, and the address."""
    address = fresh_address()
    clients = _ready_visitors(topology, address)
    before = set().union(*topology.web_connections().values())
    serving: set[int] = set()
    with ThreadPoolExecutor(BURST) as pool:
        futures = [pool.submit(_ask, client, f"How do I install widgets? (burst {attempt}, visitor {number})")
                   for number, client in enumerate(clients)]
        while not all(future.done() for future in futures):
            serving |= {pid for pid, held in topology.web_connections().items() if held - before}
            time.sleep(0.02)
    return [future.result() for future in futures], serving, address


def _counted(topology: Topology, address: str) -> dict[str, int]:
    """The questions counted for `address`, per one-minute window of the limit."""
    client = redis.Redis.from_url(topology.redis_url, decode_responses=True)
    keys: list[str] = client.keys(f"{RedisCounterStore.PREFIX}rl:web:{address}:*")  # type: ignore[assignment]
    return {key.rsplit(":", 1)[1]: int(client.get(key) or 0) for key in keys}


def test_the_per_address_ask_limit_is_counted_across_both_web_workers(deployment: Deployment) -> None:
    topology = deployment.topology
    # Each allowed answer streams for about two seconds, so the burst's connections overlap.
    deployment.fakes.script.answer = ScriptedReply(text="Use pip [1]. " * 8, chunks=8, chunk_delay=0.25)
    workers, serving, limited = set(topology.web_worker_pids()), set[int](), 0
    for attempt in range(4):  # which worker accepts a connection is the kernel's choice: retry until both did
        statuses, serving, address = _burst(topology, attempt)
        windows = _counted(topology, address)
        assert sum(windows.values()) == BURST, windows
        if len(windows) > 1:
            continue  # the burst straddled a minute: each window has its own limit, so this one proves nothing
        assert sorted(statuses) == [200] * WEB_RATE_LIMIT + [429] * (BURST - WEB_RATE_LIMIT), statuses
        limited += 1
        if serving == workers:
            break
    assert limited and serving == workers and len(workers) == 2, (limited, serving, workers)


def _succeeded(log: str) -> int:
    return len(re.findall(r"Task sources\.index\[[0-9a-f-]+\] succeeded", log))


def test_both_celery_workers_take_indexing_tasks(deployment: Deployment) -> None:
    topology, site = deployment.topology, deployment.fakes.site
    before = {name: _succeeded(topology.log_text(name)) for name in ("worker1", "worker2")}
    # Four slow sources queued at once: a worker prefetches at most its concurrency (2), so the other takes some.
    site.page_delay = 1.5
    try:
        with deployment.api() as api:
            added = api.post(f"/api/v1/{SLUG}/data-sources/",
                             json={"website_urls": [site.base_url + page for page in PAGES], "website_mode": "page"})
            assert added.status_code == 200, added.text
            ids = [source["id"] for source in added.json()["created"]]
            eventually(lambda: all(source_status(api, i)["status"] in ("INDEXED", "FAILED") for i in ids), "indexing")
            assert {source_status(api, i)["status"] for i in ids} == {"INDEXED"}
    finally:
        site.page_delay = 0.0
    took = {name: _succeeded(topology.log_text(name)) - count for name, count in before.items()}
    assert sum(took.values()) == len(PAGES) and min(took.values()) >= 1, took


def test_a_lock_held_outside_the_workers_makes_them_wait(deployment: Deployment) -> None:
    topology = deployment.topology
    with deployment.api() as api:
        created = api.post("/api/v1/gurus/", json={"slug": "locked", "name": "Locked", "domain_knowledge": "Locks"})
        assert created.status_code == 201, created.text
        eventually(lambda: api.get("/api/v1/gurus/locked/").json()["collection"]["ready"], "the collection")
        lock = f"lock:{collection_lock_name(created.json()['id'])}"
        store, token = RedisCounterStore(topology.redis_url), uuid.uuid4().hex
        assert store.claim(lock, token, ttl=120)  # as another worker of the same deployment would
        logs_before = {name: len(topology.log_text(name)) for name in ("worker1", "worker2")}

        def retried() -> bool:
            fresh = "".join(topology.log_text(name)[size:] for name, size in logs_before.items())
            return RETRIED.search(fresh) is not None

        try:
            assert api.patch("/api/v1/gurus/locked/", json={"slug": "locked-renamed"}).status_code == 200
            eventually(retried, "a worker finding the lock held")
            assert api.get("/api/v1/gurus/locked-renamed/").json()["collection"]["ready"] is False
        finally:
            store.release(lock, token)
        eventually(lambda: api.get("/api/v1/gurus/locked-renamed/").json()["collection"]["ready"], "the rename")
        collection = api.get("/api/v1/gurus/locked-renamed/").json()["collection"]
    assert collection["name"].endswith("_locked_renamed"), collection
