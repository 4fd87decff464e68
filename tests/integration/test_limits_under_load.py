"""Rate limits and the login lock-out hold under concurrent clients: real HTTP to a real uvicorn process."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.core.cache import cache

from tests.support.web_process import WebProcess, web_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile, pytest.mark.slow]

BURST = 100
KEY_LIMIT = 30
LOGIN_LIMIT = 5
SEED = """
from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.factories import UserFactory
user = UserFactory(username="burst")
Guru.objects.create(slug="burst", name="Burst").maintainers.add(user)
print(api_key_create(user=user, name="burst", rate_limit_per_minute=%d).raw)
"""


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebProcess]:
    cache.clear()  # Redis counters (production profile) outlive the test's database
    with web_process(tmp_path / "web", extra_env={"OPENGURU_LOGIN_FAILURE_LIMIT": str(LOGIN_LIMIT)}) as served:
        yield served


def burst(count: int, send: Callable[[httpx.Client], int], *, window: int) -> Counter[int]:
    """`count` requests released together (a barrier), each on its own connection; their status codes."""
    # Limits are fixed windows: a burst that straddles a boundary would rightly get two budgets.
    if time.time() % window > window - 10:
        time.sleep(window - time.time() % window + 0.5)
    start = threading.Barrier(count)

    def one(_: int) -> int:
        with httpx.Client(timeout=120) as client:
            start.wait()
            return send(client)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return Counter(pool.map(one, range(count)))


def test_a_key_limited_to_30_a_minute_gets_exactly_30_of_a_concurrent_burst(web: WebProcess) -> None:
    raw = web.manage("shell", "-c", SEED % KEY_LIMIT).strip().splitlines()[-1]
    url = f"{web.url}/api/v1/burst/data-sources/"

    statuses = burst(BURST, lambda client: client.get(url, headers={"X-API-KEY": raw}).status_code, window=60)

    assert statuses == Counter({200: KEY_LIMIT, 429: BURST - KEY_LIMIT})


def test_the_login_lock_out_holds_against_concurrent_guesses(web: WebProcess) -> None:
    web.manage("shell", "-c", SEED % KEY_LIMIT)
    token = httpx.get(f"{web.url}/accounts/login/").cookies["csrftoken"]

    def guess(client: httpx.Client) -> int:
        client.cookies.set("csrftoken", token)
        form = {"username": "burst", "password": "wrong", "csrfmiddlewaretoken": token}
        return client.post(f"{web.url}/accounts/login/", data=form).status_code

    statuses = burst(40, guess, window=15 * 60)

    # 200 is the form again ("wrong password"): exactly the allowed number of guesses was checked.
    assert statuses == Counter({200: LOGIN_LIMIT, 429: 40 - LOGIN_LIMIT})
