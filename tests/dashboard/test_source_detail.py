"""A source's own dashboard page (its pages and chunks, searched or scored), and the Sources tab's page lists."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.gurus.models import Guru, VectorCollection
from backend.pipeline.types import Chunk, SourceKind
from backend.sources.models import DataSource, SourceStatus
from backend.sources.services import source_create
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.fakes.site_server import SiteFake

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture
def guru(maintainer: Any, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # creates its collection
        created: Guru = GuruFactory(slug="widgets", name="Widgets")
    created.maintainers.add(maintainer)
    return created


@pytest.fixture
def sitemap(guru: Guru, fake_site: SiteFake, settings: SettingsWrapper,
            django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> DataSource:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.WEBSITE, url=f"{fake_site.base_url}/sitemap-three.xml",
                               options={"mode": "sitemap"})
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED
    return source


def url(name: str, guru: Guru, **kwargs: Any) -> str:
    return reverse(f"dashboard:{name}", kwargs={"slug": guru.slug, **kwargs})


def test_the_sources_tab_names_the_site_and_lists_its_pages(client: Client, guru: Guru, sitemap: DataSource,
                                                            fake_site: SiteFake) -> None:
    page = client.get(url("sources", guru)).content.decode()
    host = urlsplit(fake_site.base_url).netloc
    assert f">{host} sitemap</a>" in page and url("source", guru, source_id=sitemap.pk) in page
    assert "3 pages</summary>" in page
    for path in ("/docs/install", "/docs/config", "/blog/scheduler"):
        assert f'data-page-url="{fake_site.base_url}{path}"' in page
    assert "Plans and limits" in page and page.count('class="badge ok">Indexed</span>') >= 3


def test_the_source_page_lists_its_chunks_in_order_with_deep_links(client: Client, guru: Guru, sitemap: DataSource,
                                                                   fake_site: SiteFake) -> None:
    page = client.get(url("source", guru, source_id=sitemap.pk)).content.decode()
    assert f"{sitemap.chunk_count} chunk" in page and "in document order" in page
    assert page.count('class="chunk"') == min(sitemap.chunk_count, 20)
    install, blog = page.index(f'href="{fake_site.base_url}/docs/install"'), page.rindex("binary heap")
    assert install < blog  # the sitemap's first page first
    assert "chunk 1" in page and "from character 0" in page


def test_a_text_search_narrows_the_chunks_and_chunk_text_is_escaped(client: Client, guru: Guru,
                                                                    sitemap: DataSource) -> None:
    found = client.get(url("source", guru, source_id=sitemap.pk), {"q": "binary heap"}).content.decode()
    assert found.count('class="chunk"') == 1 and "binary heap" in found and "contain “binary heap”" in found
    assert "Installing Widgets" not in found.split('data-chunks')[1]
    assert client.get(url("source", guru, source_id=sitemap.pk), {"q": "Binary Heap"}).content.decode() \
        .count('class="chunk"') == 0  # exact text
    collection = VectorCollection.objects.get(guru_id=guru.pk).name
    assert sitemap.indexed_generation is not None
    registry.vector_store().upsert(collection, [Chunk(
        id="hostile", text='<script>alert("x")</script> hostile', vector=tuple([0.1] * registry.embedder().dimension),
        source_id=sitemap.pk, generation=sitemap.indexed_generation, kind=SourceKind.WEBSITE,
        metadata={"title": "<b>t</b>", "link": "javascript:alert(1)", "doc_key": "x", "chunk_index": 0})])
    hostile = client.get(url("source", guru, source_id=sitemap.pk), {"q": "hostile"}).content.decode()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in hostile and "<script>alert" not in hostile
    assert "&lt;b&gt;t&lt;/b&gt;" in hostile and "javascript:alert" not in hostile


def test_question_mode_scores_the_source_with_the_answer_paths_search(client: Client, guru: Guru,
                                                                      sitemap: DataSource) -> None:
    page = client.get(url("source", guru, source_id=sitemap.pk),
                      {"q": "Writes per hour on the Team plan", "mode": "question"}).content.decode()
    assert "found by the answer path" in page and "data-score" in page
    first = page.split('class="chunk"')[1]
    assert "Plans and limits" in first and "50,000" in first


def test_rename_and_access(client: Client, guru: Guru, sitemap: DataSource) -> None:
    response = client.post(url("source-rename", guru, source_id=sitemap.pk), {"title": "  Widget   docs "})
    assert response.status_code == 302
    sitemap.refresh_from_db()
    assert sitemap.title == "Widget docs"
    assert ">Widget docs</a>" in client.get(url("sources", guru)).content.decode()
    outsider = Client()
    outsider.force_login(UserFactory(username="outsider"))
    assert outsider.get(url("source", guru, source_id=sitemap.pk)).status_code == 404
    assert outsider.post(url("source-rename", guru, source_id=sitemap.pk), {"title": "x"}).status_code == 404
    other = DataSourceFactory()
    assert client.get(url("source", guru, source_id=other.pk)).status_code == 404
    never = DataSourceFactory(guru=guru, url="https://example.com/never")
    assert "Nothing of this source is indexed yet." in client.get(url("source", guru, source_id=never.pk)).content \
        .decode()


def test_the_progress_poll_carries_the_header_counts(client: Client, guru: Guru) -> None:
    DataSourceFactory(guru=guru, status=SourceStatus.PROCESSING)
    DataSourceFactory(guru=guru, status=SourceStatus.PENDING)
    DataSourceFactory(guru=guru, status=SourceStatus.INDEXED)
    DataSourceFactory(guru=guru, status=SourceStatus.FAILED)
    DataSourceFactory(status=SourceStatus.INDEXED)  # another guru's
    body = client.get(url("sources-progress", guru)).json()
    assert body["counts"] == {"total": 4, "indexed": 1, "indexing": 2, "failed": 1}
