"""The dashboard's sources page: add each kind, validation, live progress and ETA, bulk actions, access, queries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import DjangoAssertNumQueries, DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from backend.dashboard.sources.selectors import eta_text
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.selectors import source_eta_seconds
from tests.dashboard.sources_support import PAGES, client, flashes, guru, maintainer, post_indexed, site, url
from tests.factories import DataSourceFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes
from tests.fakes.site_server import SiteFake
from tests.fakes.youtube_server import YouTubeFake

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ
__all__ = ["client", "guru", "maintainer", "site"]  # fixtures, imported to be found here


# --- adding each kind ---------------------------------------------------------------------------------------


def test_add_a_website_page_indexes_it(client: Client, guru: Guru, site: SiteFake,
                                       django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    response = post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="website"),
                            {"web-url": f"{site.base_url}/docs/install", "web-mode": "page"})
    assert response.status_code == 302 and response["Location"] == url("sources", guru)
    source = DataSource.objects.get(guru=guru)
    assert (source.kind, source.status, source.options) == (SourceKind.WEBSITE, SourceStatus.INDEXED, {"mode": "page"})
    assert source.chunk_count > 0 and source.title and source.indexing_started_at is not None
    assert any("Added" in m for m in flashes(response))
    page = client.get(url("sources", guru)).content.decode()
    assert "Installing Widgets" in page and "Indexed" in page


def test_add_a_sitemap_with_crawl_limits(client: Client, guru: Guru, site: SiteFake,
                                         django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="website"),
                 {"web-url": f"{site.base_url}/sitemap_index.xml", "web-mode": "sitemap", "web-max_pages": "2",
                  "web-depth": "1", "web-private": "on"})
    source = DataSource.objects.get(guru=guru)
    assert source.options == {"mode": "sitemap", "max_pages": 2, "depth": 1} and source.private
    assert source.status == SourceStatus.INDEXED and source.progress_total == 2
    assert "<td class=\"small\">Website sitemap</td>" in client.get(url("sources", guru)).content.decode()


@pytest.fixture
def youtube(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
            monkeypatch: pytest.MonkeyPatch) -> YouTubeFake:
    monkeypatch.setattr(registry, "transcript_fetcher", lambda: youtube_fetcher)
    return youtube_fake


def test_add_a_youtube_video_and_a_playlist(client: Client, guru: Guru, youtube: YouTubeFake,
                                            django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    cues = [(float(i * 5), f"In part {i} we configure brokers and retries.") for i in range(40)]
    youtube.add_video("dQw4w9WgXcQ", title="Celery deep dive", cues=cues)
    youtube.add_video("aaaaaaaaaaa", title="One", cues=[(0.0, "Brokers hold messages for workers.")])
    youtube.add_playlist("PLtest0123456789", ["aaaaaaaaaaa"])
    add = url("source-add", guru, kind="youtube")
    post_indexed(client, django_capture_on_commit_callbacks, add, {"yt-url": "https://youtu.be/dQw4w9WgXcQ"})
    post_indexed(client, django_capture_on_commit_callbacks, add,
                 {"yt-url": "https://www.youtube.com/playlist?list=PLtest0123456789"})
    video, playlist = DataSource.objects.filter(guru=guru).order_by("id")
    assert (video.status, video.title) == (SourceStatus.INDEXED, "Celery deep dive") and video.chunk_count > 0
    assert playlist.status == SourceStatus.INDEXED and playlist.progress_total == 1
    page = client.get(url("sources", guru)).content.decode()
    assert "<td class=\"small\">YouTube video</td>" in page and "<td class=\"small\">YouTube playlist</td>" in page


def test_pdf_upload_adds_good_files_and_reports_each_bad_one(
    client: Client, guru: Guru, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    good = pdf_bytes(PAGES)
    other = pdf_bytes([["Another document about brokers."] * 20])
    settings.OPENGURU_MAX_PDF_BYTES = max(len(good), len(other)) + 100
    files = [
        SimpleUploadedFile("good.pdf", good, content_type="application/pdf"),
        SimpleUploadedFile("notes.pdf", b"just some text, not a PDF", content_type="application/pdf"),
        SimpleUploadedFile("again.pdf", good, content_type="application/pdf"),
        SimpleUploadedFile("huge.pdf", b"%PDF-1.4\n" + b"0" * (settings.OPENGURU_MAX_PDF_BYTES + 1)),
        SimpleUploadedFile("other.pdf", other, content_type="application/pdf"),
    ]
    response = post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="pdf"),
                            {"pdf-files": files})
    assert response.status_code == 302
    sources = DataSource.objects.filter(guru=guru).order_by("id")
    assert [s.title for s in sources] == ["good.pdf", "other.pdf"]
    assert all(s.status == SourceStatus.INDEXED and s.chunk_count > 0 for s in sources)
    shown = flashes(response)
    assert "Added 2 PDFs: good.pdf, other.pdf." in shown
    assert "notes.pdf was not added: not a PDF file." in shown
    assert "again.pdf was not added: the same PDF was already added to this guru." in shown
    assert any(m.startswith("huge.pdf was not added: larger than the") for m in shown)
    file_response = client.get(url("source-file", guru, source_id=sources[0].pk))
    assert file_response.status_code == 200 and b"".join(file_response) == good


def _started(seconds_ago: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds_ago)


def test_eta_extrapolates_the_pace_so_far() -> None:
    now = timezone.now()

    def eta(status: str, done: int, total: int, started: Any) -> int | None:
        source = DataSource(status=status, progress_done=done, progress_total=total, indexing_started_at=started)
        return source_eta_seconds(source=source, now=now)

    assert eta(SourceStatus.PROCESSING, 3, 10, now - timedelta(seconds=30)) == 70  # 10 s per unit, 7 left
    assert eta(SourceStatus.PROCESSING, 10, 10, now - timedelta(seconds=30)) == 0
    assert eta(SourceStatus.PROCESSING, 0, 10, now - timedelta(seconds=30)) is None  # no pace yet
    assert eta(SourceStatus.PROCESSING, 3, 0, now - timedelta(seconds=30)) is None  # total unknown
    assert eta(SourceStatus.PROCESSING, 3, 10, None) is None  # never claimed
    assert eta(SourceStatus.PENDING, 3, 10, now - timedelta(seconds=30)) is None
    assert eta(SourceStatus.PROCESSING, 1, 4, now + timedelta(seconds=5)) == 0  # clock skew is not negative
    assert [eta_text(s) for s in (None, 0, 42, 70, 3900)] == ["", "~1 s left", "~42 s left", "~1 min left",
                                                               "~1 h 5 min left"]


def test_the_table_shows_status_progress_and_errors(client: Client, guru: Guru) -> None:
    running = DataSourceFactory(guru=guru, status=SourceStatus.PROCESSING, progress_done=3, progress_total=10,
                                indexing_started_at=_started(30), error_message="Retrying: fetch timed out")
    DataSourceFactory(guru=guru, status=SourceStatus.FAILED, error_message="The page returned <b>404</b>")
    DataSourceFactory(guru=guru, status=SourceStatus.INDEXED, chunk_count=17, title="Guide",
                      last_indexed_at=_started(7200))
    page = client.get(url("sources", guru)).content.decode()
    assert f'data-source-id="{running.pk}" data-active="1"' in page
    assert "3/10" in page and "width: 30%" in page and "~1 min left" in page and "Retrying: fetch timed out" in page
    assert "The page returned &lt;b&gt;404&lt;/b&gt;" in page  # escaped
    assert ">17<" in page and "2\xa0hours ago" in page
    assert 'class="badge error"' in page and 'class="badge ok"' in page and 'class="badge warn"' in page


def test_progress_json_reports_the_asked_sources_of_this_guru_only(client: Client, guru: Guru) -> None:
    running = DataSourceFactory(guru=guru, status=SourceStatus.PROCESSING, progress_done=3, progress_total=10,
                                indexing_started_at=_started(30))
    done = DataSourceFactory(guru=guru, status=SourceStatus.INDEXED, chunk_count=5, progress_done=4,
                             progress_total=4, last_indexed_at=timezone.now())
    foreign = DataSourceFactory(status=SourceStatus.PROCESSING)
    progress = url("sources-progress", guru)
    body = client.get(progress, {"ids": f"{running.pk},{done.pk},{foreign.pk}"}).json()
    entries = {entry["id"]: entry for entry in body["sources"]}
    assert set(entries) == {running.pk, done.pk} and body["active"] == 1
    entry = entries[running.pk]
    assert (entry["status"], entry["done"], entry["total"], entry["percent"]) == ("PROCESSING", 3, 10, 30)
    assert 69 <= entry["eta_seconds"] <= 72 and entry["active"] is True and entry["last_indexed"] is None
    finished = entries[done.pk]
    assert (finished["percent"], finished["eta_seconds"], finished["chunk_count"]) == (100, None, 5)
    assert finished["last_indexed"] and finished["active"] is False
    assert [e["id"] for e in client.get(progress).json()["sources"]] == [running.pk]  # no ids: the active ones
    assert client.get(progress, {"ids": "1,abc"}).status_code == 400
    assert client.get(progress, {"ids": ",".join(["1"] * 201)}).status_code == 400


def test_the_page_and_progress_take_a_bounded_number_of_queries(
    client: Client, guru: Guru, django_assert_max_num_queries: DjangoAssertNumQueries,
) -> None:
    DataSource.objects.bulk_create(
        DataSource(guru=guru, kind=SourceKind.WEBSITE, url=f"https://docs.example.com/{i}",
                   status=SourceStatus.PROCESSING, progress_done=1, progress_total=3,
                   indexing_started_at=_started(5))
        for i in range(300)
    )
    client.get(url("sources", guru))  # warm the session
    with django_assert_max_num_queries(8):
        response = client.get(url("sources", guru))
    assert response.content.decode().count("data-source-id=") == 50 and "Page 1 of 6" in response.content.decode()
    with django_assert_max_num_queries(8):
        assert len(client.get(url("sources", guru), {"page": "6"}).content.decode().split("data-source-id=")) == 51
    with django_assert_max_num_queries(5):
        assert len(client.get(url("sources-progress", guru)).json()["sources"]) == 200


# --- actions ------------------------------------------------------------------------------------------------


def test_reindex_selected_rows_and_one_row(client: Client, guru: Guru,
                                           django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    first, second, third = (DataSourceFactory(guru=guru, status=SourceStatus.INDEXED) for _ in range(3))
    foreign = DataSourceFactory(status=SourceStatus.INDEXED)
    action = url("sources-action", guru)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(action, {"action": "reindex", "ids": [first.pk, second.pk, foreign.pk], "page": "1"})
    assert response.status_code == 302 and response["Location"] == url("sources", guru) + "?page=1"
    assert len(callbacks) == 2 and "Re-indexing 2 sources" in flashes(response)[0]
    statuses = dict(DataSource.objects.values_list("pk", "status"))
    assert [statuses[s.pk] for s in (first, second, third, foreign)] == ["PENDING", "PENDING", "INDEXED", "INDEXED"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        client.post(action, {"row_reindex": third.pk, "ids": [first.pk]})  # the row's button wins
    assert len(callbacks) == 1 and DataSource.objects.get(pk=third.pk).status == SourceStatus.PENDING
    response = client.post(action, {"action": "reindex"})
    assert flashes(response)[-1] == "Select at least one source."


def test_reindex_all(client: Client, guru: Guru,
                     django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    for _ in range(3):
        DataSourceFactory(guru=guru, status=SourceStatus.FAILED)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url("sources-action", guru), {"action": "reindex_all"})
    assert len(callbacks) == 3 and flashes(response) == ["Re-indexing all 3 sources."]
    assert set(DataSource.objects.values_list("status", flat=True)) == {SourceStatus.PENDING}


def test_delete_asks_for_confirmation_first(client: Client, guru: Guru,
                                            django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    keep, gone, also_gone = (DataSourceFactory(guru=guru, title=f"Doc {i}") for i in range(3))
    foreign = DataSourceFactory()
    confirm = client.post(url("sources-action", guru), {"action": "delete", "ids": [gone.pk, also_gone.pk,
                                                                                     foreign.pk]})
    assert confirm.status_code == 200 and DataSource.objects.count() == 4
    page = confirm.content.decode()
    assert "Delete 2 sources?" in page and "Doc 1" in page and "Doc 2" in page and "Doc 0" not in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url("sources-delete", guru), {"ids": [gone.pk, also_gone.pk, foreign.pk]})
    assert response.status_code == 302 and flashes(response) == ["Deleted 2 sources: Doc 1, Doc 2."]
    assert set(DataSource.objects.values_list("pk", flat=True)) == {keep.pk, foreign.pk}
    single = client.post(url("sources-action", guru), {"row_delete": keep.pk})
    assert "Delete 1 source?" in single.content.decode()


# --- access -------------------------------------------------------------------------------------------------


def test_another_maintainer_gets_404_everywhere(guru: Guru) -> None:
    source = DataSourceFactory(guru=guru, file="sources/x/a.pdf", url="")
    outsider = Client()
    outsider.force_login(UserFactory(username="outsider"))
    gets = [url("sources", guru), url("sources-progress", guru), url("source-file", guru, source_id=source.pk)]
    posts = [url("source-add", guru, kind=kind) for kind in ("youtube", "website", "pdf", "github")]
    posts += [url("sources-action", guru), url("sources-delete", guru)]
    for path in gets:
        assert outsider.get(path).status_code == 404, path
    for path in posts:
        assert outsider.post(path, {"action": "reindex_all", "ids": [source.pk]}).status_code == 404, path
    assert DataSource.objects.get(pk=source.pk).status == SourceStatus.PENDING
    anonymous = Client().get(url("sources", guru))
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_the_file_link_is_404_for_a_source_without_a_file(client: Client, guru: Guru) -> None:
    source = DataSourceFactory(guru=guru)
    assert client.get(url("source-file", guru, source_id=source.pk)).status_code == 404
    assert client.get(url("source-file", guru, source_id=999999)).status_code == 404


@pytest.mark.parametrize(("status", "kind", "done", "total", "eta", "text"), [
    ("PENDING", "WEBSITE", 0, 0, None, "queued for a worker"),
    ("PROCESSING", "WEBSITE", 0, 0, None, "finding pages…"),
    ("PROCESSING", "PDF", 0, 0, None, "starting…"),
    ("PROCESSING", "PDF", 0, 10, None, "measuring speed…"),
    ("PROCESSING", "PDF", 4, 10, 90, "~2 min left"),
    ("INDEXED", "PDF", 10, 10, None, ""),
])
def test_an_active_run_always_says_what_it_is_doing(
    status: str, kind: str, done: int, total: int, eta: int | None, text: str
) -> None:
    from backend.dashboard.sources.selectors import activity_text
    from backend.sources.models import DataSource

    source = DataSource(status=status, kind=kind, progress_done=done, progress_total=total)
    assert activity_text(source, eta) == text
