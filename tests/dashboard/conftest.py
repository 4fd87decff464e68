"""Shared dashboard fixtures: a logged-in maintainer ("ana") and the guru she maintains ("celery")."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory


@pytest.fixture
def maintainer(client: Client) -> Any:
    user = UserFactory(username="ana")
    client.force_login(user)
    return user


@pytest.fixture
def guru(maintainer: Any) -> Guru:
    created: Guru = GuruFactory(slug="celery", name="Celery Guru")
    created.maintainers.add(maintainer)
    return created
