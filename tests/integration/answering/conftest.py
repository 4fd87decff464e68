"""Fixtures of the answering tests: an indexed guru and the OpenAI fake as the configured LLM."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import make_indexed_guru


@pytest.fixture
def indexed(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return make_indexed_guru(django_capture_on_commit_callbacks)


@pytest.fixture
def with_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    """The OpenAI provider pointed at the fake server (retries with the adapter's real backoff)."""
    settings.OPENGURU_LLM = openai_server.llm_settings()
    yield openai_server
