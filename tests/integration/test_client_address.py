"""Per-client limits key on the real client: forwarding headers count only from OPENGURU_TRUSTED_PROXIES.

Real HTTP to the production ASGI app under uvicorn (asgi_live_server runs it with --no-proxy-headers,
as the launcher, the Dockerfile and compose do); the test client's address is 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.config.settings.components.proxies import trusted_proxies
from backend.core import ratelimit
from backend.dashboard.account import throttle
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile]


@pytest.fixture
def site(asgi_live_server: str, settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch) -> Iterator[httpx.Client]:
    cache.clear()  # Redis counters (production profile) outlive the test's database
    clock = SimpleNamespace(time=lambda: 60_000_030.0)  # one window for every request, whenever the test runs
    monkeypatch.setattr(ratelimit, "time", clock)
    monkeypatch.setattr(throttle, "time", clock)
    settings.OPENGURU_WEB_RATE_LIMIT = 1
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 1
    GuruFactory(slug="docs", name="Docs Guru")
    with httpx.Client(base_url=asgi_live_server, timeout=60) as client:
        client.get("/g/docs/")  # sets the CSRF cookie, as the page does for its script
        yield client


def ask(client: httpx.Client, **headers: str) -> int:
    token = client.cookies["csrftoken"]
    sent = client.post("/g/docs/ask/", json={"question": "hello"}, headers={"X-CSRFToken": token, **headers})
    return sent.status_code


def spoofed(i: int) -> dict[str, str]:
    return {"X-Real-IP": f"198.51.100.{i}", "X-Forwarded-For": f"203.0.113.{i}"}


def test_rotating_forwarding_headers_from_an_untrusted_peer_do_not_reset_the_limit(
    site: httpx.Client, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_TRUSTED_PROXIES = []  # the default
    assert [ask(site, **spoofed(i)) for i in range(3)] == [200, 429, 429]


def test_a_trusted_proxy_names_the_client_by_its_rightmost_untrusted_hop(
    site: httpx.Client, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_TRUSTED_PROXIES = ["127.0.0.0/8"]
    # Each forwarded client has its own budget of one question …
    assert [ask(site, **{"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(3)] == [200, 200, 200]
    # … a client cannot prepend hops to look new (the proxy appends the real peer last) …
    chain = [ask(site, **{"X-Forwarded-For": f"10.9.9.{i}, 192.0.2.44"}) for i in range(2)]
    assert chain == [200, 429]
    # … and X-Real-IP is not read at all.
    assert ask(site, **{"X-Forwarded-For": "192.0.2.44", "X-Real-IP": "192.0.2.45"}) == 429


def test_the_login_lock_out_ignores_rotating_headers(site: httpx.Client, settings: SettingsWrapper) -> None:
    settings.OPENGURU_TRUSTED_PROXIES = []
    UserFactory(username="bo")
    token = site.cookies["csrftoken"]

    def log_in(i: int) -> int:
        form = {"username": f"user{i}", "password": "guess", "csrfmiddlewaretoken": token}
        return site.post("/accounts/login/", data=form, headers=spoofed(i)).status_code

    assert [log_in(i) for i in range(3)] == [200, 429, 429]  # one failure per address, and it is one address


@pytest.mark.parametrize("value", ["*", "nginx", "10.0.0.0/33", "300.1.1.1"])
def test_trusted_proxies_are_addresses_or_networks(value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="OPENGURU_TRUSTED_PROXIES"):
        trusted_proxies([value])
    assert trusted_proxies(["172.30.255.0/28", "10.1.2.3", "::1"]) == ["172.30.255.0/28", "10.1.2.3/32", "::1/128"]
