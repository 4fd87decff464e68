"""A sitemap source through the real index path: its pages recorded, named after its site, cited per page."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.answering.events import EventKind
from backend.answering.models import Citation
from backend.answering.services import AskRequest, answer_stream
from backend.dashboard.analytics.selectors import guru_analytics
from backend.gurus.models import Guru
from backend.sources.models import DataSource, PageStatus, SourceKind, SourcePage, SourceStatus
from backend.sources.selectors import source_covering_url
from backend.sources.services import source_schedule_index
from tests.factories import UserFactory
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.source_support import index_source

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> SiteFake:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}  # real retrieval, so a question finds its page
    return fake_site


def _sitemap(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, site: SiteFake) -> DataSource:
    return index_source(capture, guru, SourceKind.WEBSITE, f"{site.base_url}/sitemap-three.xml", mode="sitemap")


def _live_chunks_by_page(milvus: MilvusVectorStore, collection: str, source: DataSource) -> dict[str, int]:
    assert source.indexed_generation is not None
    counts: dict[str, int] = {}
    for hit in milvus.source_chunks(collection, source_id=source.pk, generation=source.indexed_generation, limit=500):
        counts[hit.metadata["doc_key"]] = counts.get(hit.metadata["doc_key"], 0) + 1
    return counts


def test_a_sitemap_records_its_pages_and_is_named_after_its_site(
    guru: Guru, collection: str, site: SiteFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _sitemap(django_capture_on_commit_callbacks, guru, site)
    assert source.status == SourceStatus.INDEXED
    assert source.title == f"{urlsplit(site.base_url).netloc} sitemap"  # not "Installing Widgets", its first page
    pages = list(SourcePage.objects.filter(source=source))
    base = site.base_url
    assert [p.url for p in pages] == [f"{base}/docs/install", f"{base}/docs/config", f"{base}/blog/scheduler"]
    assert [p.position for p in pages] == [0, 1, 2] and {p.status for p in pages} == {PageStatus.INDEXED}
    assert "Installing Widgets" in pages[0].title and "Plans and limits" in pages[1].title
    assert all(p.last_indexed_at == source.last_indexed_at and len(p.content_hash) == 64 for p in pages)
    # Each page's count is what the vector store holds for it, and they add up to the source's.
    assert {p.url: p.chunk_count for p in pages} == _live_chunks_by_page(milvus, collection, source)
    assert sum(p.chunk_count for p in pages) == source.chunk_count > 0
    # Another source of this guru asking "is this page already indexed?" (normalised spellings match).
    assert source_covering_url(guru=guru, url=f"{base.upper().replace('HTTP://', 'http://')}/docs/./install#x") \
        == source
    assert source_covering_url(guru=guru, url=f"{base}/docs/quickstart") is None
    assert source_covering_url(guru=guru, url="http://[::1") is None


def test_a_rerun_replaces_the_pages_and_keeps_a_failed_one_visible(
    guru: Guru, collection: str, site: SiteFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _sitemap(django_capture_on_commit_callbacks, guru, site)
    # Sources indexed before pages were recorded carry their first page's title: the next run renames them.
    first = SourcePage.objects.filter(source=source).first()
    assert first is not None
    DataSource.objects.filter(pk=source.pk).update(title=first.title)
    site.overrides["/docs/config"] = Reply(404, b"<h1>Gone</h1>", {"Content-Type": "text/html"})
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED and source.title.endswith(" sitemap")
    failed = SourcePage.objects.get(source=source, url=f"{site.base_url}/docs/config")
    assert failed.status == PageStatus.FAILED and failed.chunk_count == 0 and failed.error
    assert failed.last_indexed_at is None
    assert SourcePage.objects.filter(source=source).count() == 3
    assert f"{site.base_url}/docs/config" not in _live_chunks_by_page(milvus, collection, source)
    assert source_covering_url(guru=guru, url=f"{site.base_url}/docs/config") is None  # not indexed now
    # A maintainer's name is kept by later runs.
    DataSource.objects.filter(pk=source.pk).update(title="Widget docs")
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert source.title == "Widget docs"


def test_a_cited_page_is_credited_in_citations_and_analytics(
    guru: Guru, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _sitemap(django_capture_on_commit_callbacks, guru, site)
    stream = list(answer_stream(AskRequest(guru=guru, question="How much storage does the Team plan include?",
                                           channel="WEB")))
    references = [e.data for e in stream if e.kind is EventKind.DONE][0]["references"]
    page_url = f"{site.base_url}/docs/config"
    # The reference names the page itself, not the sitemap.
    assert references and references[0]["link"] == page_url and "Plans and limits" in references[0]["title"]
    print("REFS", references, list(Citation.objects.values()))
    cited = Citation.objects.get(source_id=source.pk, page_url=page_url)
    assert "Plans and limits" in cited.page_title
    top = guru_analytics(guru=guru, period=7).top_sources
    entry = next(t for t in top if t.link == page_url)
    assert "Plans and limits" in entry.title and entry.page_of == source.title and entry.count == 1
    maintainer = UserFactory()
    guru.maintainers.add(maintainer)
    client = Client()
    client.force_login(maintainer)
    page = client.get(f"/dashboard/g/{guru.slug}/analytics/").content.decode()
    assert f'href="{page_url}"' in page and f"page of {source.title}" in page
    # A private source's references carry no link; its citation still names the page (found by its title).
    DataSource.objects.filter(pk=source.pk).update(private=True)
    stream = list(answer_stream(AskRequest(guru=guru, question="Why was the scheduler rewritten with a heap?",
                                           channel="WEB")))
    references = [e.data for e in stream if e.kind is EventKind.DONE][0]["references"]
    assert references and references[0]["link"] == ""
    assert Citation.objects.filter(source_id=source.pk, page_url=f"{site.base_url}/blog/scheduler").exists()
