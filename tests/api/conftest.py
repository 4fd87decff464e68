"""API fixtures: a maintainer of guru A with an all-gurus key, a guru B of someone else, key helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from rest_framework.test import APIClient

from backend.api.services import api_key_create
from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory

KeyMaker = Callable[..., str]
ClientMaker = Callable[[str], APIClient]


@pytest.fixture(autouse=True)
def _fresh_rate_limits(db: None) -> Iterator[None]:
    # Rate-limit counters live in the shared cache, which (Redis) outlives a test's transaction.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def maintainer(db: None) -> Any:
    return UserFactory(username="maintainer")


@pytest.fixture
def other_user(db: None) -> Any:
    return UserFactory(username="someone-else")


@pytest.fixture
def guru_a(maintainer: Any, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # creates its (in-memory) collection
        guru: Guru = GuruFactory(slug="guru-a", name="Guru A")
    guru.maintainers.add(maintainer)
    return guru


@pytest.fixture
def guru_b(other_user: Any) -> Guru:
    guru: Guru = GuruFactory(slug="guru-b", name="Guru B")
    guru.maintainers.add(other_user)
    return guru


@pytest.fixture
def make_key(db: None) -> KeyMaker:
    def make(user: Any, guru: Guru | None = None, rate_limit_per_minute: int = 1000) -> str:
        return api_key_create(user=user, name="test", guru=guru, rate_limit_per_minute=rate_limit_per_minute).raw

    return make


@pytest.fixture
def client_with() -> ClientMaker:
    def make(raw_key: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=raw_key)
        return client

    return make


@pytest.fixture
def api(maintainer: Any, guru_a: Guru, make_key: KeyMaker, client_with: ClientMaker) -> APIClient:
    """A client whose key works for every guru the maintainer of guru A maintains."""
    return client_with(make_key(maintainer))
