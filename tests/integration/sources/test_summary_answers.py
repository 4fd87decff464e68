"""Broad questions are answered from the summaries, and cite them; narrow ones still from the passages."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.events import EventKind
from backend.answering.services import AskRequest, answer_stream
from backend.gurus.models import Guru
from backend.sources.models import SourceKind, Summarization
from backend.sources.summaries import summaries_run
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.source_support import index_source
from tests.support.summaries import page_html, small_trees, topic_paragraphs

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture
def corpus(guru: Guru, fake_site: SiteFake, settings: SettingsWrapper,
           django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    """A guru over two small pages (scheduler, workers), summarised offline."""
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]
    small_trees(settings)
    for path, topic in (("/scheduler", "Scheduler"), ("/workers", "Workers")):
        fake_site.overrides[path] = Reply(200, page_html(f"{topic} guide", topic_paragraphs(topic, 6)).encode(),
                                          {"Content-Type": "text/html"})
        index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{fake_site.base_url}{path}")
    assert Summarization.objects.filter(guru=guru, is_root=True, source__isnull=True).exists()
    return guru


def _final(guru: Guru, question: str) -> dict[str, Any]:
    events = list(answer_stream(AskRequest(guru=guru, question=question, channel="WEB")))
    return next(e.data for e in events if e.kind is EventKind.DONE)


@pytest.mark.parametrize("question", ["What is this project about?", "Give me an overview",
                                      "What can it do?", f"Tell me about {'Ingest'}"])
def test_a_broad_question_is_answered_from_the_guru_summary_and_cites_it(corpus: Guru, question: str) -> None:
    done = _final(corpus, question)
    assert not done["out_of_context"], done
    summary = next(r for r in done["references"] if r.get("summary") and r["source_id"] == 0)
    assert summary["cited"], done["references"]
    assert summary["title"] == f"Summary of {corpus.name}"
    assert summary["link"] == f"/g/{corpus.slug}/summary/"


def test_a_narrow_question_is_still_answered_from_the_passages(corpus: Guru) -> None:
    done = _final(corpus, "Which option configures workers feature 3?")
    assert not done["out_of_context"]
    first = done["references"][0]
    assert not first.get("summary") and "Workers" in first["title"]


def test_a_comparison_reaches_both_sources_summaries(corpus: Guru) -> None:
    done = _final(corpus, "Compare the Scheduler and the Workers")
    titles = " ".join(r["title"] for r in done["references"])
    assert "Scheduler" in titles and "Workers" in titles


def test_a_cached_answer_expires_when_the_summaries_change(
    guru: Guru, fake_site: SiteFake, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]
    small_trees(settings)
    settings.OPENGURU_SUMMARIES = False  # indexed first without summaries, as before an upgrade
    fake_site.overrides["/scheduler"] = Reply(200, page_html("Scheduler guide", topic_paragraphs("Scheduler", 6))
                                              .encode(), {"Content-Type": "text/html"})
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE,
                          f"{fake_site.base_url}/scheduler")
    before = _final(guru, "Give me an overview")
    assert not any(r.get("summary") for r in before["references"])
    settings.OPENGURU_SUMMARIES = True
    summaries_run(guru_id=guru.pk, source_id=source.pk)
    after = _final(guru, "Give me an overview")
    assert after["question_id"] != before["question_id"] or not after.get("cached")
    assert any(r.get("summary") and r["cited"] for r in after["references"])
