"""Fixtures and helpers of the dashboard's Sources tests: a maintainer's logged-in client, a guru, the fake site."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory
from tests.fakes.site_server import SiteFake

PAGES = [[f"Line {i}: workers acknowledge messages after the task finished." for i in range(30)]]


@pytest.fixture
def maintainer(db: None) -> Any:
    return UserFactory(username="maintainer")


@pytest.fixture
def guru(maintainer: Any, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # creates its (in-memory) collection
        created: Guru = GuruFactory(slug="celery", name="Celery")
    created.maintainers.add(maintainer)
    return created


@pytest.fixture
def client(maintainer: Any) -> Client:
    browser = Client()
    browser.force_login(maintainer)
    return browser


def url(name: str, guru: Guru, **kwargs: Any) -> str:
    return reverse(f"dashboard:{name}", kwargs={"slug": guru.slug, **kwargs})


def flashes(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def post_indexed(client: Client, capture: DjangoCaptureOnCommitCallbacks, path: str, data: dict[str, Any]) -> Any:
    """POST and run the index tasks queued on commit (eager Celery), as a real request would."""
    with capture(execute=True):
        return client.post(path, data)


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> SiteFake:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    return fake_site
