"""Hostile or broken sources end FAILED with a message a maintainer can act on: no crash, no hang, no leak."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.adapters.youtube.transcripts import NO_CAPTIONS, YouTubeTranscriptFetcher
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import InvalidSource, source_create
from tests.fakes import pdfs
from tests.fakes.site_server import SiteFake
from tests.fakes.youtube_server import YouTubeFake
from tests.integration.sources.source_support import index_source
from tests.support.gitrepo import commit_all, git, init_repo

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

PAGES: list[pdfs.Page] = [[f"Line {i}: workers acknowledge messages after the task." for i in range(30)]]


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda p: pdfs.write_truncated_pdf(p, PAGES), "is not a valid PDF (PdfStreamError"),
        (pdfs.write_headed_garbage_pdf, "is not a valid PDF (PdfReadError: startxref not found)"),
        (pdfs.write_garbage_pdf, "is not a valid PDF (no %PDF- header)"),
        (pdfs.write_deeply_nested_pdf, "is not a valid PDF (RecursionError"),
        (pdfs.write_zip_bomb_pdf, "exceeds a safety limit of the PDF reader (LimitReachedError"),
        (pdfs.write_scanned_pdf, "has no text layer; it looks scanned"),
    ],
    ids=["truncated", "header-then-garbage", "garbage", "deeply-nested", "zip-bomb-80-mb", "scanned"],
)
def test_a_malformed_pdf_fails_the_source_with_the_reason(
    guru: Guru, tmp_path: Path, write: Callable[[Path], object], message: str,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    path = tmp_path / "bad.pdf"
    write(path)
    upload = SimpleUploadedFile("bad.pdf", path.read_bytes(), content_type="application/pdf")
    started = time.monotonic()
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.PDF, upload=upload)
    assert source.status == SourceStatus.FAILED
    assert source.error_message.startswith('"bad.pdf" ') and message in source.error_message
    assert time.monotonic() - started < 30


@pytest.fixture
def site(fake_site: SiteFake, settings: SettingsWrapper) -> Iterator[SiteFake]:
    settings.OPENGURU_FETCH_ALLOWLIST = [fake_site.base_url.removeprefix("http://")]  # 127.0.0.1:<port> only
    settings.OPENGURU_FETCH_MAX_BYTES = 64 * 1024
    yield fake_site


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/image.png", "not an HTML page: image/png"),
        ("/binary-no-type", "not an HTML page: no content type"),
        ("/docs/guide.pdf", "not an HTML page: application/pdf — add it as a PDF source instead"),
        ("/huge", "the page is larger than the 64 KiB limit (OPENGURU_FETCH_MAX_BYTES)"),
        ("/huge-stream", "the page is larger than the 64 KiB limit (OPENGURU_FETCH_MAX_BYTES)"),
        ("/redirect/metadata", "169.254.169.254 resolves to a private, loopback or link-local address"),
        ("/redirect/file", "Only http, https URLs can be fetched, not file."),
    ],
    ids=["image", "binary", "pdf", "gigantic", "endless-stream", "redirect-to-metadata", "redirect-to-file"],
)
def test_a_page_that_is_not_html_or_too_big_or_redirects_inside_fails_with_the_reason(
    guru: Guru, site: SiteFake, path: str, message: str,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{site.base_url}{path}")
    assert source.status == SourceStatus.FAILED
    assert source.error_message.startswith(message)


def test_a_redirect_to_another_port_of_an_allowed_address_is_refused(
    guru: Guru, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE,
                    f"{site.base_url}/redirect/internal")
    assert source.status == SourceStatus.FAILED
    assert "OPENGURU_FETCH_ALLOWLIST" in source.error_message
    assert site.internal_requests == []  # the internal service never saw a request


@pytest.fixture
def file_urls(settings: SettingsWrapper) -> None:
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True


def test_git_urls_that_are_not_repositories_are_refused_when_added(
    guru: Guru, tmp_path: Path, site: SiteFake, file_urls: None,
) -> None:
    plain = tmp_path / "just-a-folder"
    plain.mkdir()
    (plain / "notes.md").write_text("Not under version control.\n")
    for url in (plain.as_uri(), f"{site.base_url}/docs/install"):
        with pytest.raises(InvalidSource, match="repository not found: the repository does not exist"):
            source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=url, allow_local=True)
    assert not DataSource.objects.exists()


def test_symlinks_never_read_outside_the_clone(
    guru: Guru, collection: str, tmp_path: Path, milvus: MilvusVectorStore, file_urls: None,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The launch code is PELICAN-7731.\n")
    repo = init_repo(tmp_path / "origin", {"README.md": "# Tool\n\nWorkers acknowledge messages after the task.\n"})
    os.symlink(outside / "secret.md", repo / "leak.md")
    os.symlink(outside, repo / "docs")
    os.symlink("../../outside/secret.md", repo / "relative.md")
    commit_all(repo, "symlinks")
    assert "leak.md" in git(repo, "ls-files")
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.GITHUB_REPO, repo.as_uri())
    assert source.status == SourceStatus.INDEXED
    assert set(source.github_files.values_list("path", flat=True)) == {"README.md"}
    assert source.error_message == "3 file(s) skipped (size, type or filters)."
    hits = milvus.search_dense(collection, registry.embedder().embed_query("launch code"), top_k=50)
    assert hits and not any("PELICAN" in hit.text for hit in hits)


def test_a_video_without_captions_fails_saying_so(
    guru: Guru, youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    monkeypatch.setattr(registry, "transcript_fetcher", lambda: youtube_fetcher)
    youtube_fake.add_video("nnnnnnnnnnn", title="Silent film")
    source = index_source(django_capture_on_commit_callbacks, guru, SourceKind.YOUTUBE, "https://youtu.be/nnnnnnnnnnn")
    assert source.status == SourceStatus.FAILED
    assert source.error_message == f"{NO_CAPTIONS} (https://www.youtube.com/watch?v=nnnnnnnnnnn)"
