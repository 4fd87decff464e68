"""Source services around indexing: validation, scheduling, beat fan-out, admin, terminal command."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import InvalidSource, source_create, source_schedule_due
from backend.sources.validation import AlreadyASource
from tests.factories import DataSourceFactory, UserFactory
from tests.fakes.pdfs import write_pdf
from tests.support.git_servers import HOSTED, GitHosting, free_port

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

PAGES = [[f"Line {i}: prefetch limits decide how many messages a worker reserves." for i in range(30)]]


@pytest.mark.parametrize(("kind", "url", "message"), [
    (SourceKind.YOUTUBE, "https://vimeo.com/123", "YouTube"),
    (SourceKind.WEBSITE, "ftp://docs.example.com/", "http"),
    (SourceKind.GITHUB_REPO, "--upload-pack=evil", "clone URL"),
    (SourceKind.PDF, "", "uploaded file"),
])
def test_invalid_sources_are_refused_before_anything_is_stored(
    guru: Guru, kind: str, url: str, message: str
) -> None:
    with pytest.raises(InvalidSource, match=message):
        source_create(guru=guru, kind=kind, url=url)
    assert not DataSource.objects.exists()


def test_a_new_run_supersedes_a_queued_one(
    guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    from backend.sources.indexing import source_index

    with django_capture_on_commit_callbacks(execute=False):
        source = source_create(guru=guru, kind=SourceKind.WEBSITE, url="https://docs.example.com/")
    old_run = source.generation
    DataSource.objects.filter(pk=source.pk).update(generation=old_run + 1)
    source_index(source_id=source.pk, run=old_run)  # the stale message arrives: nothing happens
    assert DataSource.objects.get(pk=source.pk).status == SourceStatus.PENDING


def test_beat_schedules_only_due_sources(guru: Guru) -> None:
    long_ago = timezone.now() - timedelta(days=3)
    due = DataSourceFactory(guru=guru, kind=SourceKind.GITHUB_REPO, url="https://github.com/a/b",
                            status=SourceStatus.INDEXED, last_indexed_at=long_ago)
    DataSourceFactory(guru=guru, kind=SourceKind.GITHUB_REPO, url="https://github.com/a/c",
                      status=SourceStatus.INDEXED, last_indexed_at=timezone.now())
    DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, status=SourceStatus.INDEXED, last_indexed_at=long_ago)
    assert source_schedule_due() == 1  # websites are not re-crawled by default
    due.refresh_from_db()
    assert (due.status, due.generation) == (SourceStatus.PENDING, 1)


def test_admin_adds_and_deletes_sources_through_the_services(
    guru: Guru, client: Client, tmp_path: Path, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    pdf = write_pdf(tmp_path / "admin.pdf", PAGES)
    with django_capture_on_commit_callbacks(execute=True), pdf.open("rb") as handle:
        response = client.post("/admin/sources/datasource/add/", {
            "guru": guru.pk, "kind": SourceKind.PDF, "file": handle, "title": "Admin PDF", "status": "PENDING",
            "progress_done": 0, "progress_total": 0, "options": "{}",
        })
    assert response.status_code == 302, response.content.decode()[:3000]
    source = DataSource.objects.get()
    assert source.status == SourceStatus.INDEXED and source.chunk_count > 0
    stored = Path(source.file.path)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/admin/sources/datasource/{source.pk}/delete/", {"post": "yes"})
    assert not DataSource.objects.exists() and not stored.exists()


@pytest.mark.django_db(transaction=True)
def test_add_source_command_waits_and_reports(guru: Guru, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", PAGES)
    call_command("add_source", guru.slug, str(pdf))
    out = capsys.readouterr().out
    assert "Added PDF document source" in out and "Indexed" in out and "chunks from manual.pdf" in out


def test_add_source_checks_a_git_remote_and_takes_a_local_path(
    guru: Guru, git_hosts: GitHosting, capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(CommandError, match="repository not found"):
        call_command("add_source", guru.slug, f"{git_hosts.http.base_url}/nope.git", "--no-wait")
    with pytest.raises(CommandError, match="host unreachable"):
        call_command("add_source", guru.slug, f"http://127.0.0.1:{free_port()}/a/b.git", "--no-wait")
    assert not DataSource.objects.exists()
    path = git_hosts.root / HOSTED["gitlab"]  # the server's terminal may add a repository on its disk
    call_command("add_source", guru.slug, str(path), "--no-wait")
    assert "Added Git repository source" in capsys.readouterr().out
    assert DataSource.objects.get().url == path.as_uri()


def test_the_same_video_or_page_in_another_spelling_is_already_a_source(guru: Guru) -> None:
    video = DataSourceFactory(guru=guru, kind=SourceKind.YOUTUBE, url="https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    page = DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, url="https://docs.example.com/a/b?x=1")
    for kind, again, existing in [(SourceKind.YOUTUBE, "https://youtu.be/dQw4w9WgXcQ", video),
                                  (SourceKind.WEBSITE, "HTTPS://docs.EXAMPLE.com:443/a/./b?x=1#top", page)]:
        with pytest.raises(AlreadyASource) as caught:
            source_create(guru=guru, kind=kind, url=again)
        assert caught.value.source == existing and caught.value.status == 409
    source_create(guru=guru, kind=SourceKind.WEBSITE, url="https://docs.example.com/a/b?x=2")  # another page
    assert DataSource.objects.count() == 3


def test_the_terminal_guesses_a_repository_from_the_forge_or_the_url(tmp_path: Path) -> None:
    from backend.sources.validation import looks_like_repository

    for target in ("https://github.com/celery/celery", "https://gitlab.example.com/group/project",
                   "https://codeberg.org/forgejo/forgejo", "https://git.example.com/repo.git", "git://h/r",
                   str(tmp_path)):
        assert looks_like_repository(target), target
    for target in ("https://docs.celeryq.dev/en/stable/", "manual.pdf", "https://example.com/github.com/x"):
        assert not looks_like_repository(target), target
