"""guru_suggest drafts from the guru's summary: by rules offline, by the guru's model when one is configured."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.gurus.models import Guru
from backend.pipeline.suggest_rules import OFFLINE_DRAFTER
from backend.sources.models import Summarization
from backend.sources.suggest import NoSummaryYet, guru_suggest
from tests.factories import DataSourceFactory
from tests.fakes.openai_server import FAKE_CHAT_MODEL, OpenAIFakeServer

pytestmark = pytest.mark.django_db

ROOT = ("Celery is a distributed task queue for Python. A broker is a service that carries messages between "
        "clients and workers. Celery Beat schedules periodic tasks, and Celery Beat reads the configuration.")


def _tree(guru: Guru) -> None:
    """Two summarised sources under one guru summary; one of them has no title."""
    titled = DataSourceFactory(guru=guru, title="How to configure the broker")
    untitled = DataSourceFactory(guru=guru, title="")
    root = Summarization.objects.create(guru=guru, level=1, text=ROOT, model="offline-extractive",
                                        extractive=True, is_root=True)
    for position, source in enumerate((titled, untitled)):
        Summarization.objects.create(guru=guru, source=source, parent=root, level=0, position=position,
                                     text="Celery workers run tasks.", extractive=True, is_source_root=True)


def test_without_a_guru_summary_there_is_nothing_to_draft_from(guru: Guru) -> None:
    with pytest.raises(NoSummaryYet, match="no summary yet"):
        guru_suggest(guru=guru)
    source = DataSourceFactory(guru=guru, title="Tasks")
    Summarization.objects.create(guru=guru, source=source, level=0, text="Celery workers run tasks.",
                                 extractive=True)  # a tree stopped below its top: no guru summary
    with pytest.raises(NoSummaryYet):
        guru_suggest(guru=guru)


def test_offline_the_rules_draft_from_the_summary_and_the_titles(guru: Guru) -> None:
    _tree(guru)
    suggestion = guru_suggest(guru=guru)
    assert suggestion.drafted_by == OFFLINE_DRAFTER
    assert suggestion.domain_knowledge.startswith("Celery is a distributed task queue for Python.")
    assert len(suggestion.questions) == 8
    assert "How do I configure the broker?" in suggestion.questions
    assert "What is Celery?" in suggestion.questions  # "Celery Guru" is about Celery
    assert not any("docs.example.com" in q for q in suggestion.questions)  # the untitled source asks nothing


def test_with_a_model_the_gurus_own_model_drafts(guru: Guru, settings: SettingsWrapper,
                                                 openai_server: OpenAIFakeServer) -> None:
    _tree(guru)
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.chat_models = frozenset({FAKE_CHAT_MODEL, "gpt-guru-own"})
    Guru.objects.filter(pk=guru.pk).update(chat_model="gpt-guru-own")
    guru.refresh_from_db()
    questions = [f"How do Celery workers handle case {i}?" for i in range(5)]
    openai_server.script.push(ScriptedReply(json={"domain_knowledge": "Celery task queues.", "questions": questions}))
    suggestion = guru_suggest(guru=guru, count=5)
    assert suggestion.questions == tuple(questions) and suggestion.domain_knowledge == "Celery task queues."
    assert suggestion.drafted_by == "gpt-guru-own"
    request = openai_server.script.requests[-1]
    assert request.model == "gpt-guru-own"
    assert "- How to configure the broker" in request.messages[-1][1] and ROOT in request.messages[-1][1]
