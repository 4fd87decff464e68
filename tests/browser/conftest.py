"""Fixtures of the Integrations tab's browser tests: maintainer "maria", her guru "celery", README images."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.core.cache import cache
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import make_indexed_guru

if TYPE_CHECKING:
    from playwright.sync_api import Page

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture
def maintainer() -> AbstractUser:
    return UserFactory(username="maria")


@pytest.fixture
def guru(maintainer: Any) -> Guru:
    created: Guru = GuruFactory(slug="celery", name="Celery Guru")
    created.maintainers.add(maintainer)
    return created


@pytest.fixture
def readme_image(page: Page) -> Callable[[str, str], Path]:
    """Save one element of the page (a card) as docs/img/<name>, the README's image of it."""

    def take(selector: str, name: str) -> Path:
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        path = DOCS_IMG / name
        page.locator(selector).screenshot(path=str(path), animations="disabled")
        return path

    return take


@pytest.fixture
def docs_guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks, settings: SettingsWrapper,
              openai_server: OpenAIFakeServer) -> Guru:
    """An indexed guru answering with the OpenAI wire fake (the guru page's LLM tests)."""
    cache.clear()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    return make_indexed_guru(django_capture_on_commit_callbacks)
