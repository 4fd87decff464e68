"""Every source kind is bounded in text, chunks and time; a source past a bound FAILS saying which one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from backend.gurus.models import Guru
from backend.pipeline.budget import resident_mb
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.fakes.pdfs import pdf_bytes, text_bomb_pdf_bytes
from tests.fakes.site_server import SiteFake
from tests.fakes.youtube_server import YouTubeFake
from tests.integration.sources.source_support import index_source
from tests.support.gitrepo import init_repo

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

CHARS_BOUND = "characters of text (OPENGURU_SOURCE_MAX_CHARS)"


class PeakMemory:
    """Samples this process's resident memory every 20 ms; `grown` is the peak above the first sample, in MB."""

    def __init__(self) -> None:
        self.start = self.peak = resident_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, resident_mb())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def grown(self) -> float:
        return self.peak - self.start


def _chunks(milvus: MilvusVectorStore, collection: str, source: DataSource) -> int:
    return len(milvus.search_dense(collection, registry.embedder().embed_query("workers"), top_k=1000,
                                   source_ids=[source.pk]))


def test_a_39_kb_pdf_holding_8_mb_of_text_fails_fast_with_bounded_memory(
    guru: Guru, collection: str, milvus: MilvusVectorStore, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}  # the default product's embedder, as the issue ran it
    data = text_bomb_pdf_bytes(chars=8_000_000, pages=20)
    assert len(data) < 40_000
    upload = SimpleUploadedFile("bomb.pdf", data, content_type="application/pdf")
    # CPU time of this process (the indexing runs in it), not wall time: a loaded machine once read 31.9 s.
    started = time.process_time()
    with PeakMemory() as memory:
        source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.PDF, upload=upload)
    elapsed = time.process_time() - started
    assert source.status == SourceStatus.FAILED, (source.status, f"{elapsed:.1f} s", f"+{memory.grown:.0f} MB")
    assert source.error_message == f"stopped: this PDF holds more than 5,000,000 {CHARS_BOUND}"
    assert elapsed < 30, f"{elapsed:.1f} s"
    assert memory.grown < 250, f"+{memory.grown:.0f} MB"
    assert _chunks(milvus, collection, source) == 0  # nothing of the refused run stays in the collection


def test_a_pdf_over_the_chunk_bound_fails_naming_it(
    guru: Guru, settings: SettingsWrapper, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_SOURCE_MAX_CHUNKS = 3
    pages = [[f"Line {i} of page {p}: workers acknowledge messages after the task." for i in range(80)]
             for p in range(4)]
    upload = SimpleUploadedFile("long.pdf", pdf_bytes(pages), content_type="application/pdf")
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.PDF, upload=upload)
    assert source.status == SourceStatus.FAILED
    assert source.error_message == "stopped: this PDF makes more than 3 chunks (OPENGURU_SOURCE_MAX_CHUNKS)"


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> Iterator[SiteFake]:
    settings.OPENGURU_FETCH_ALLOWLIST = [fake_site.base_url.removeprefix("http://")]  # 127.0.0.1:<port> only
    yield fake_site


def test_a_web_page_and_a_crawl_over_the_text_bound_fail_naming_it(
    guru: Guru, site: SiteFake, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_SOURCE_MAX_CHARS = 300
    page = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}/docs/install")
    assert (page.status, page.error_message) == (SourceStatus.FAILED, f"stopped: this web page holds more than "
                                                                      f"300 {CHARS_BOUND}")
    crawl = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}/docs/",
                   mode="crawl")
    assert (crawl.status, crawl.error_message) == (SourceStatus.FAILED, f"stopped: this website holds more than "
                                                                        f"300 {CHARS_BOUND}")


def test_a_slow_crawl_stops_at_the_time_bound(
    guru: Guru, site: SiteFake, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_SOURCE_MAX_SECONDS = 1
    site.page_delay = 0.4  # the crawl finds more than four pages: well past one second in all
    started = time.monotonic()
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}/docs/",
                    mode="crawl")
    assert source.status == SourceStatus.FAILED
    assert source.error_message == "stopped: indexing this website took longer than 1 s (OPENGURU_SOURCE_MAX_SECONDS)"
    assert time.monotonic() - started < 5


def test_a_transcript_over_the_text_bound_fails_naming_it(
    guru: Guru, youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher, settings: SettingsWrapper,
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    monkeypatch.setattr(registry, "transcript_fetcher", lambda: youtube_fetcher)
    settings.OPENGURU_SOURCE_MAX_CHARS = 1000
    youtube_fake.add_video("dQw4w9WgXcQ", cues=[(float(i), f"Cue {i} about brokers and workers.") for i in range(200)])
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE, "https://youtu.be/dQw4w9WgXcQ")
    assert source.status == SourceStatus.FAILED
    assert source.error_message == f"stopped: this video's transcript holds more than 1,000 {CHARS_BOUND}"


def test_a_repository_over_the_text_or_file_bound_fails_before_reading_a_file(
    guru: Guru, tmp_path: Path, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
    files = {f"docs/page{i}.md": f"# Page {i}\n\n" + "Workers acknowledge messages. " * 40 for i in range(30)}
    url = init_repo(tmp_path / "origin", files).as_uri()
    settings.OPENGURU_SOURCE_MAX_CHARS = 10_000
    big = index_source(django_capture_on_commit_callbacks, guru, SourceKind.GITHUB_REPO, url)
    assert (big.status, big.error_message) == (SourceStatus.FAILED, f"stopped: this repository holds more than "
                                                                    f"10,000 {CHARS_BOUND}")
    assert big.progress_done == 0 and not big.github_files.exists()
    settings.OPENGURU_SOURCE_MAX_CHARS = 5_000_000
    settings.OPENGURU_GITHUB_MAX_FILES = 20
    DataSource.objects.all().delete()
    many = index_source(django_capture_on_commit_callbacks, guru, SourceKind.GITHUB_REPO, url)
    assert many.status == SourceStatus.FAILED
    assert many.error_message == ("stopped: this repository has more than 20 files to index "
                                  "(OPENGURU_GITHUB_MAX_FILES); narrow it with include or exclude globs")


def _wait_for_end(source_id: int, timeout: float) -> DataSource:
    deadline = time.monotonic() + timeout
    while (source := DataSource.objects.get(pk=source_id)).status not in (SourceStatus.INDEXED, SourceStatus.FAILED):
        assert time.monotonic() < deadline, f"source {source_id} still {source.status} after {timeout} s"
        # Not faster: the in-memory test database shares its cache between threads, where a read that
        # overlaps the worker's write fails that write at once ("table is locked") instead of waiting.
        time.sleep(0.5)
    return source


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_running_worker_fails_the_bomb_and_indexes_the_next_source(
    guru: Guru, collection: str, milvus: MilvusVectorStore, live_celery_worker: None,
) -> None:
    bomb = SimpleUploadedFile("bomb.pdf", text_bomb_pdf_bytes(), content_type="application/pdf")
    failed = source_create(guru=guru, kind=SourceKind.PDF, upload=bomb)
    lines = [f"Line {i}: workers acknowledge messages." for i in range(40)]
    good = SimpleUploadedFile("manual.pdf", pdf_bytes([lines]), content_type="application/pdf")
    indexed = source_create(guru=guru, kind=SourceKind.PDF, upload=good)
    assert _wait_for_end(failed.pk, 60).error_message == f"stopped: this PDF holds more than 5,000,000 {CHARS_BOUND}"
    assert _wait_for_end(indexed.pk, 60).status == SourceStatus.INDEXED
    assert _chunks(milvus, collection, indexed) > 0 and _chunks(milvus, collection, failed) == 0
