"""X-API-KEY authentication, guru scoping, session login and per-key rate limits."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from rest_framework.test import APIClient

from backend.api.models import APIKey
from backend.api.services import api_key_create, api_key_revoke
from backend.core import ratelimit
from backend.gurus.models import Guru
from tests.api.conftest import ClientMaker, KeyMaker
from tests.factories import GuruFactory

pytestmark = pytest.mark.django_db

SOURCES_A = "/api/v1/guru-a/data-sources/"
SOURCES_B = "/api/v1/guru-b/data-sources/"


def test_missing_key_is_401_with_a_code(guru_a: Guru) -> None:
    response = APIClient().get(SOURCES_A)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated" and response.json()["msg"]


def test_unknown_key_is_401(guru_a: Guru, client_with: ClientMaker) -> None:
    response = client_with("og_not-a-real-key").get(SOURCES_A)
    assert response.status_code == 401 and response.json()["code"] == "unauthenticated"


def test_revoked_key_is_401(maintainer: Any, guru_a: Guru, client_with: ClientMaker) -> None:
    issued = api_key_create(user=maintainer, name="old")
    api_key_revoke(api_key=issued.api_key)
    assert client_with(issued.raw).get(SOURCES_A).status_code == 401


def test_key_of_an_inactive_user_is_401(maintainer: Any, guru_a: Guru, make_key: KeyMaker,
                                        client_with: ClientMaker) -> None:
    raw = make_key(maintainer)
    maintainer.is_active = False
    maintainer.save()
    assert client_with(raw).get(SOURCES_A).status_code == 401


def test_key_scoped_to_guru_a_cannot_use_guru_b(maintainer: Any, guru_a: Guru, guru_b: Guru, make_key: KeyMaker,
                                               client_with: ClientMaker) -> None:
    guru_b.maintainers.add(maintainer)  # even a guru the user maintains is out of the key's scope
    client = client_with(make_key(maintainer, guru=guru_a))
    assert client.get(SOURCES_A).status_code == 200
    response = client.get(SOURCES_B)
    assert response.status_code == 403 and response.json()["code"] == "forbidden"


def test_all_gurus_key_works_on_every_maintained_guru_only(maintainer: Any, guru_a: Guru, guru_b: Guru,
                                                          api: APIClient) -> None:
    guru_c = GuruFactory(slug="guru-c")
    guru_c.maintainers.add(maintainer)
    assert api.get(SOURCES_A).status_code == 200
    assert api.get("/api/v1/guru-c/data-sources/").status_code == 200
    assert api.get(SOURCES_B).status_code == 403


def test_unknown_guru_is_404(api: APIClient) -> None:
    response = api.get("/api/v1/no-such-guru/data-sources/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_superuser_key_reaches_any_guru(guru_b: Guru, make_key: KeyMaker, client_with: ClientMaker) -> None:
    from tests.factories import UserFactory

    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    assert client_with(make_key(admin)).get(SOURCES_B).status_code == 200


def test_session_login_works_too(maintainer: Any, guru_a: Guru, guru_b: Guru) -> None:
    client = APIClient()
    client.force_login(maintainer)
    assert client.get(SOURCES_A).status_code == 200
    assert client.get(SOURCES_B).status_code == 403


def test_rate_limit_per_key_answers_429_with_retry_after(
    maintainer: Any, guru_a: Guru, make_key: KeyMaker, client_with: ClientMaker, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fixed clock keeps all requests in one window, whatever second the test starts at.
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: 60_000_030.0))
    limited = client_with(make_key(maintainer, rate_limit_per_minute=3))
    other = client_with(make_key(maintainer, rate_limit_per_minute=3))
    assert [limited.get(SOURCES_A).status_code for _ in range(3)] == [200, 200, 200]
    response = limited.get(SOURCES_A)
    assert response.status_code == 429
    assert response.json()["code"] == "rate_limited"
    assert int(response["Retry-After"]) == 30
    assert other.get(SOURCES_A).status_code == 200  # the limit is per key


def test_last_used_at_is_recorded(maintainer: Any, guru_a: Guru, client_with: ClientMaker) -> None:
    issued = api_key_create(user=maintainer, name="fresh")
    assert issued.api_key.last_used_at is None
    assert client_with(issued.raw).get(SOURCES_A).status_code == 200
    assert APIKey.objects.get(pk=issued.api_key.pk).last_used_at is not None


def test_only_the_hash_of_a_key_is_stored(maintainer: Any) -> None:
    issued = api_key_create(user=maintainer, name="k")
    stored = APIKey.objects.get(pk=issued.api_key.pk)
    assert issued.raw not in (stored.key_hash, stored.prefix) and issued.raw.startswith(stored.prefix)
