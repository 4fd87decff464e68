"""Websites (page, sitemap, crawl) and YouTube videos/playlists index through the real fetchers."""

from __future__ import annotations

import pytest
import requests
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.net_guard import BlockedUrlError
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import InvalidSource, source_create
from tests.fakes.site_server import SiteFake
from tests.fakes.youtube_server import YouTubeFake
from tests.integration.sources.source_support import index_source

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> SiteFake:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    return fake_site


def _doc_keys(milvus: MilvusVectorStore, collection: str, source: DataSource) -> set[str]:
    hits = milvus.search_dense(collection, registry.embedder().embed_query("docs"), top_k=500,
                               source_ids=[source.pk])
    return {h.metadata["doc_key"] for h in hits}


def test_a_single_page(guru: Guru, collection: str, site: SiteFake, milvus: MilvusVectorStore,
                       django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}/docs/install")
    assert source.status == SourceStatus.INDEXED and source.title
    assert _doc_keys(milvus, collection, source) == {f"{site.base_url}/docs/install"}


def test_sitemap_respects_robots_and_skips_broken_pages(
    guru: Guru, collection: str, site: SiteFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE,
                    f"{site.base_url}/sitemap_index.xml", mode="sitemap")
    assert source.status == SourceStatus.INDEXED
    keys = _doc_keys(milvus, collection, source)
    assert f"{site.base_url}/blog/scheduler" in keys and f"{site.base_url}/docs/config" in keys
    assert not any("/private/" in key for key in keys)
    assert source.progress_done == source.progress_total >= 4


def test_crawl_stays_on_site_and_under_the_start_path(
    guru: Guru, collection: str, site: SiteFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}/docs/",
                    mode="crawl", depth=2, max_pages=20)
    assert source.status == SourceStatus.INDEXED
    keys = _doc_keys(milvus, collection, source)
    assert keys and all(key.startswith(f"{site.base_url}/docs/") for key in keys)
    assert not any("/private/" in key for key in keys)
    # The crawl's growing total ends at the pages indexed; the broken link is reported, not counted.
    assert source.progress_done == source.progress_total == len(keys)
    assert f"{site.base_url}/docs/broken" in source.error_message


@pytest.mark.parametrize("mode", ["page", "sitemap", "crawl"])
def test_internal_addresses_are_refused_when_added_with_the_fetchers_message(
    guru: Guru, fake_site: SiteFake, mode: str,
) -> None:
    url = f"{fake_site.base_url}/docs/"
    with pytest.raises(BlockedUrlError) as fetch:
        registry.web_fetcher().fetch(url)
    with pytest.raises(InvalidSource) as caught:
        source_create(guru=guru, kind=SourceKind.WEBSITE, url=url, options={"mode": mode})
    assert caught.value.detail == str(fetch.value)  # the sentence the run would have failed with
    assert "OPENGURU_FETCH_ALLOWLIST" in caught.value.detail and "restart" in caught.value.detail
    assert not DataSource.objects.exists() and fake_site.requests == []


@pytest.fixture
def youtube(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
            monkeypatch: pytest.MonkeyPatch) -> YouTubeFake:
    # The real fetcher and library, routed to the fake YouTube by the fixture's session.
    monkeypatch.setattr(registry, "transcript_fetcher", lambda: youtube_fetcher)
    return youtube_fake


def test_video_chunks_link_to_their_second(
    guru: Guru, collection: str, youtube: YouTubeFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    cues = [(float(i * 5), f"In part {i} we configure brokers, queues and retries for workers.") for i in range(300)]
    youtube.add_video("dQw4w9WgXcQ", title="Celery deep dive", cues=cues)
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE,
                    "https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    assert (source.status, source.title) == (SourceStatus.INDEXED, "Celery deep dive")
    hits = milvus.search_dense(collection, registry.embedder().embed_query("brokers"), top_k=50,
                               source_ids=[source.pk])
    assert len(hits) > 3
    for hit in hits:
        assert hit.metadata["link"] == f"https://www.youtube.com/watch?v=dQw4w9WgXcQ&t={hit.metadata['seconds']}s"
    assert max(h.metadata["seconds"] for h in hits) > 300


def test_playlist_expands_and_skips_a_video_without_captions(
    guru: Guru, collection: str, youtube: YouTubeFake, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    youtube.add_video("aaaaaaaaaaa", title="One", cues=[(0.0, "Brokers hold messages for workers.")])
    youtube.add_video("bbbbbbbbbbb", title="Two", state="no_captions")
    youtube.add_video("ccccccccccc", title="Three", cues=[(0.0, "Workers acknowledge messages late.")])
    youtube.add_playlist("PLtest0123456789", ["aaaaaaaaaaa", "bbbbbbbbbbb", "ccccccccccc"])
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE,
                    "https://www.youtube.com/playlist?list=PLtest0123456789")
    assert source.status == SourceStatus.INDEXED
    assert source.progress_total == 3 and "bbbbbbbbbbb" in source.error_message
    hits = milvus.search_dense(collection, registry.embedder().embed_query("workers"), top_k=10,
                               source_ids=[source.pk])
    assert {h.metadata["doc_key"] for h in hits} == {"aaaaaaaaaaa", "ccccccccccc"}


def test_a_playlist_over_the_limit_is_cut_there_and_the_source_says_so(
    guru: Guru, collection: str, youtube_fake: YouTubeFake, settings: SettingsWrapper,
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_PLAYLIST_MAX_VIDEOS = 2
    session = youtube_fake.session()
    build = registry.transcript_fetcher  # the registry's own construction (limit from settings), fake session
    monkeypatch.setattr(registry, "transcript_fetcher", lambda: _with_session(build(), session))
    for video in ("aaaaaaaaaaa", "bbbbbbbbbbb", "ccccccccccc"):
        youtube_fake.add_video(video, title=video, cues=[(0.0, "Brokers hold messages for workers.")])
    youtube_fake.add_playlist("PLtest0123456789", ["aaaaaaaaaaa", "bbbbbbbbbbb", "ccccccccccc"])
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE,
                    "https://www.youtube.com/playlist?list=PLtest0123456789")
    assert source.status == SourceStatus.INDEXED and source.progress_total == 2
    assert source.error_message.startswith("Only the first 2 videos of the playlist were taken")
    assert "OPENGURU_PLAYLIST_MAX_VIDEOS" in source.error_message


def _with_session(fetcher: YouTubeTranscriptFetcher, session: requests.Session) -> YouTubeTranscriptFetcher:
    return YouTubeTranscriptFetcher(http_session=session, timeout=fetcher.timeout,
                                    max_playlist_videos=fetcher.max_playlist_videos)


def test_a_private_video_fails_with_a_clear_message(
    guru: Guru, youtube: YouTubeFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    youtube.add_video("ppppppppppp", state="private")
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE, "https://youtu.be/ppppppppppp")
    assert source.status == SourceStatus.FAILED and "private" in source.error_message.lower()
