"""Shared dashboard fixtures: a logged-in maintainer ("ana"), the guru she maintains ("celery"), or staff."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from backend.evaluation.models import EvalSet
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


@pytest.fixture
def staff(client: Client) -> Any:
    """A logged-in staff member ("root"): the instance Settings page is theirs."""
    user = UserFactory(username="root", is_staff=True)
    client.force_login(user)
    return user


@pytest.fixture
def smoke(guru: Guru) -> EvalSet:
    """The Evaluation tab tests' three-question set (tests/dashboard/evaluation_support.JSONL)."""
    from backend.evaluation.sets import parse_jsonl, set_import
    from tests.dashboard.evaluation_support import JSONL

    return set_import(guru, "smoke", parse_jsonl(JSONL)).eval_set
