"""Which chat model answers: the guru's own, else the instance's default answer model, else the env default."""

from __future__ import annotations

import pytest

from backend.answering.selectors import chat_model_for
from backend.core.services import settings_update
from tests.factories import GuruFactory

pytestmark = pytest.mark.django_db


def test_guru_override_then_instance_default_then_environment() -> None:
    guru = GuruFactory(chat_model="")
    assert chat_model_for(guru) == ""  # the registry then uses OPENGURU_CHAT_MODEL
    settings_update(answer_model="gpt-4.1-mini")
    assert chat_model_for(guru) == "gpt-4.1-mini"
    guru.chat_model = "gpt-4.1"
    assert chat_model_for(guru) == "gpt-4.1"
