"""Summary trees built by the real index → summarise task chain, on real Milvus, with a scripted LLM."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ReplyScript, ScriptedReply
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.config.settings.components.models import llm_from_env
from backend.gurus.models import Guru
from backend.pipeline.types import GURU_SUMMARY_SOURCE, SUMMARY_GENERATION
from backend.sources.models import DataSource, SourceKind, SourceStatus, Summarization, SummaryState
from backend.sources.services import source_delete, source_schedule_index
from backend.sources.summary_selectors import guru_summary, source_summary
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.openai_server import FAKE_CHAT_MODEL, OpenAIFakeServer
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.source_support import index_source
from tests.support.summaries import page_html, small_trees, summarise_calls, topic_paragraphs

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
SUMMARY_TEXT = "A scripted summary of the material, naming its main topics and facts."


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> SiteFake:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]
    small_trees(settings)
    return fake_site


@pytest.fixture
def llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> OpenAIFakeServer:
    openai_server.script = ReplyScript(default=ScriptedReply(text=SUMMARY_TEXT, prompt_tokens=300,
                                                             completion_tokens=60))
    settings.OPENGURU_LLM = openai_server.llm_settings()
    return openai_server


def _serve(site: SiteFake, path: str, title: str, paragraphs: list[str]) -> str:
    site.overrides[path] = Reply(200, page_html(title, paragraphs).encode(), {"Content-Type": "text/html"})
    return f"{site.base_url}{path}"


def _levels(source: DataSource) -> list[int]:
    rows = Summarization.objects.filter(source=source)
    return [rows.filter(level=level).count() for level in range(max(r.level for r in rows) + 1)]


def test_a_page_becomes_a_tree_of_several_layers(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    url = _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 30))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    assert source.status == SourceStatus.INDEXED
    assert source.summary_state == SummaryState.DONE and source.summary_done == source.summary_total > 4
    levels = _levels(source)
    assert len(levels) >= 3 and levels[-1] == 1, levels
    calls = summarise_calls(llm.script.requests)
    assert len(calls) == sum(levels), "one call per node: nothing summarised twice"
    root = Summarization.objects.get(source=source, is_source_root=True)
    assert root.is_root, "a one-source guru's summary is its source's"
    assert root.model == FAKE_CHAT_MODEL and not root.extractive
    assert all(r.parent is not None for r in Summarization.objects.filter(source=source).exclude(pk=root.pk))
    guru.refresh_from_db()
    assert guru.summary_tokens_used == 360 * len(calls)
    stored = milvus.source_chunks(collection, source_id=source.pk, generation=SUMMARY_GENERATION, limit=100)
    assert len(stored) == sum(levels) and all(h.metadata["summary"] for h in stored)
    view = source_summary(source_id=source.pk)
    assert view is not None and view.text == SUMMARY_TEXT and not view.partial


def test_an_edit_to_one_paragraph_re_summarises_only_its_path(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    url = _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 30))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    first = len(summarise_calls(llm.script.requests))
    depth = len(_levels(source))
    before = set(Summarization.objects.filter(source=source).values_list("pk", flat=True))
    _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 30, edited=20))
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    again = len(summarise_calls(llm.script.requests)) - first
    assert again == depth, f"{again} calls for one edited paragraph (tree depth {depth}, first run {first})"
    after = set(Summarization.objects.filter(source=source).values_list("pk", flat=True))
    assert len(after) == len(before) and len(before - after) == again
    assert Summarization.objects.filter(source=source, is_source_root=True).count() == 1


def test_the_budget_stops_the_tree_but_never_indexing(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    Guru.objects.filter(pk=guru.pk).update(summary_token_budget=1500)
    url = _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 30))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    assert source.status == SourceStatus.INDEXED and source.chunk_count > 0
    assert source.summary_state == SummaryState.OVER_BUDGET and "budget" in source.summary_note
    guru.refresh_from_db()
    assert guru.summary_tokens_used <= 1500 + 360
    made = Summarization.objects.filter(source=source).count()
    assert 0 < made < source.summary_total
    assert not Summarization.objects.filter(source=source, is_source_root=True).exists()
    view = source_summary(source_id=source.pk)
    assert view is not None and view.partial
    # Raised, the next run finishes the tree and re-uses what the first one made.
    Guru.objects.filter(pk=guru.pk).update(summary_token_budget=None)
    calls = len(summarise_calls(llm.script.requests))
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert source.summary_state == SummaryState.DONE
    assert len(summarise_calls(llm.script.requests)) - calls == source.summary_total - made


def test_offline_summaries_are_extracts(
    guru: Guru, collection: str, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    paragraphs = topic_paragraphs("Scheduler", 12)
    url = _serve(site, "/guide", "Scheduler guide", paragraphs)
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    assert source.summary_state == SummaryState.DONE
    rows = list(Summarization.objects.filter(source=source))
    assert rows and all(r.extractive and r.prompt_tokens == 0 for r in rows)
    root = next(r for r in rows if r.is_source_root)
    sentences = [s.strip() for p in paragraphs for s in p.split(". ")]
    assert root.text and any(s[:40] in root.text for s in sentences), "an extract quotes the source"
    view = source_summary(source_id=source.pk)
    assert view is not None and view.extractive and "Extract" in view.label


def test_the_guru_summary_merges_its_sources_and_forgets_a_deleted_one(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    first = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE,
                         _serve(site, "/scheduler", "Scheduler", topic_paragraphs("Scheduler", 8)))
    second = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE,
                          _serve(site, "/workers", "Workers", topic_paragraphs("Workers", 8)))
    root = Summarization.objects.get(guru=guru, is_root=True)
    assert root.source_id is None and root.children.count() == 2
    view = guru_summary(guru_id=guru.pk)
    assert view is not None and set(view.sources) == {first.pk, second.pk}
    assert milvus.source_chunks(collection, source_id=GURU_SUMMARY_SOURCE, generation=SUMMARY_GENERATION, limit=10)
    with django_capture_on_commit_callbacks(execute=True):
        source_delete(source=DataSource.objects.get(pk=second.pk))
    root = Summarization.objects.get(guru=guru, is_root=True)
    assert root.source_id == first.pk and root.is_source_root
    assert not milvus.source_chunks(collection, source_id=GURU_SUMMARY_SOURCE, generation=SUMMARY_GENERATION,
                                    limit=10)
    assert not milvus.source_chunks(collection, source_id=second.pk, generation=SUMMARY_GENERATION, limit=10)


def test_gemini_writes_the_tree_too(
    guru: Guru, collection: str, site: SiteFake, settings: SettingsWrapper, gemini_server: FakeGeminiServer,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    gemini_server.script = ReplyScript(default=ScriptedReply(text=SUMMARY_TEXT))
    settings.OPENGURU_LLM = llm_from_env({"GEMINI_API_KEY": FAKE_GEMINI_KEY, "GEMINI_BASE_URL": gemini_server.url})
    url = _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 10))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    assert source.summary_state == SummaryState.DONE
    root = Summarization.objects.get(source=source, is_source_root=True)
    assert root.text == SUMMARY_TEXT and not root.extractive and "gemini" in root.model
    assert len(summarise_calls(gemini_server.script.requests)) == Summarization.objects.filter(source=source).count()


def test_a_refused_key_fails_the_summary_not_the_source(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    llm.script = ReplyScript(default=ScriptedReply(status=401))
    url = _serve(site, "/guide", "Scheduler guide", topic_paragraphs("Scheduler", 10))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    assert source.status == SourceStatus.INDEXED
    assert source.summary_state == SummaryState.FAILED and source.summary_note


def test_a_short_page_is_one_piece_and_its_summary_is_the_root(
    guru: Guru, collection: str, site: SiteFake, llm: OpenAIFakeServer,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    url = _serve(site, "/short", "Short note", topic_paragraphs("Scheduler", 1))
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, url)
    rows = list(Summarization.objects.filter(source=source))
    assert len(rows) == 1 and rows[0].level == 0 and rows[0].is_source_root and rows[0].is_root
    assert len(summarise_calls(llm.script.requests)) == 1 and source.summary_total == 1
