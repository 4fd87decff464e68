"""A crawl source indexes page by page: its progress total grows on the row while the crawl finds pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus.models import Guru
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ingest_types import FetchedPage
from backend.sources import indexing
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.fakes.site_server import SiteFake

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

CHAPTERS, SECTIONS = 6, 4
PAGES = 1 + CHAPTERS + CHAPTERS * SECTIONS  # the book's index, its chapters and their sections


@dataclass
class Clock:
    """The progress writer's clock; only fetching a page moves it, so write timing is deterministic."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class BookFetcher:
    """A PageFetcher serving a book of CHAPTERS x SECTIONS pages (and one dead link) under `base`.

    Each fetch records the progress the source row shows at that moment, then takes `seconds_per_page`.
    """

    base: str
    clock: Clock
    seconds_per_page: float
    seen: list[tuple[int, int]] = field(default_factory=list)

    def fetch(self, url: str) -> FetchedPage:
        row = DataSource.objects.values_list("progress_done", "progress_total").get(kind=SourceKind.WEBSITE)
        self.seen.append(row)
        self.clock.now += self.seconds_per_page
        path = url.removeprefix(self.base)
        if path == "":
            links = [f"{self.base}c{c}" for c in range(1, CHAPTERS + 1)] + [f"{self.base}missing"]
        elif path.startswith("c") and "/" not in path:
            links = [f"{self.base}{path}/s{s}" for s in range(1, SECTIONS + 1)]
        elif path.startswith("c"):
            links = [self.base]
        else:
            raise PermanentServiceError("page not found (HTTP 404)")
        return FetchedPage(url=url, final_url=url, title=f"Book {path}", links=tuple(links),
                           markdown=f"# Book {path}\n\nThe {path or 'index'} page explains widgets and brokers.")


@pytest.fixture
def book(fake_site: SiteFake, settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch) -> partial[BookFetcher]:
    """robots.txt comes from the fake site; its pages from a BookFetcher made with the returned factory."""
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    clock = Clock()
    monkeypatch.setattr(indexing, "Progress", partial(indexing.Progress, clock=clock))
    return partial(BookFetcher, f"{fake_site.base_url}/book/", clock)


def _crawl(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, fetcher: BookFetcher,
           monkeypatch: pytest.MonkeyPatch) -> tuple[DataSource, int]:
    """Index the book as a crawl source; the source and how many progress writes the run made."""
    monkeypatch.setattr(registry, "page_fetcher", lambda: fetcher)
    with CaptureQueriesContext(connection) as queries, capture(execute=True):
        source = source_create(guru=guru, kind=SourceKind.WEBSITE, url=fetcher.base,
                               options={"mode": "crawl", "depth": 3, "max_pages": 100})
    source.refresh_from_db()
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")
              and 'SET "progress_done"' in q["sql"]]
    return source, len(writes)


def test_the_total_grows_while_the_crawl_runs_and_ends_at_the_pages_indexed(
    guru: Guru, collection: str, book: partial[BookFetcher], milvus: MilvusVectorStore,
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    fetcher = book(seconds_per_page=0.2)
    source, writes = _crawl(django_capture_on_commit_callbacks, guru, fetcher, monkeypatch)
    assert source.status == SourceStatus.INDEXED
    assert source.progress_done == source.progress_total == PAGES
    hits = milvus.search_dense(collection, registry.embedder().embed_query("widgets"), top_k=500,
                               source_ids=[source.pk])
    assert len({hit.metadata["doc_key"] for hit in hits}) == PAGES
    assert f"{fetcher.base}missing" in source.error_message and f"Indexed {PAGES} of {PAGES + 1}" in (
        source.error_message)
    totals = [total for _, total in fetcher.seen]
    assert fetcher.seen[0] == (0, 1)  # the start page is known before it is fetched
    assert all(done <= total for done, total in fetcher.seen)
    assert any(1 < total < PAGES for total in totals) and max(totals) > PAGES // 2
    # Pages come every 0.2 s and progress is written every 0.5 s: about one write per three pages.
    assert 4 <= writes <= PAGES // 2


def test_fast_pages_write_progress_only_at_the_start_and_the_end(
    guru: Guru, collection: str, book: partial[BookFetcher],
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    fetcher = book(seconds_per_page=0.0)
    source, writes = _crawl(django_capture_on_commit_callbacks, guru, fetcher, monkeypatch)
    assert source.status == SourceStatus.INDEXED
    assert source.progress_done == source.progress_total == PAGES
    assert len(fetcher.seen) == PAGES + 1 and set(fetcher.seen) == {(0, 1)}
    assert writes == 2
