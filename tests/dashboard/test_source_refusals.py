"""Adding sources from the dashboard: Git from any host, refusals at submit, duplicates and covered pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.sources.models import DataSource, GithubFile, SourceKind, SourceStatus
from tests.dashboard.sources_support import client, flashes, guru, maintainer, post_indexed, site, url
from tests.factories import DataSourceFactory
from tests.fakes.site_server import SiteFake
from tests.support.git_servers import HOSTED, PRIVATE, GitHosting

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
__all__ = ["client", "guru", "maintainer", "site"]  # fixtures, imported to be found here


def test_a_private_git_repository_with_branch_globs_and_token(
    client: Client, guru: Guru, git_hosts: GitHosting,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    token = git_hosts.https.password
    response = post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="github"), {
        "gh-url": f"{git_hosts.https.base_url}/{PRIVATE}", "gh-branch": "trunk", "gh-include": "src/**\nREADME.md\n\n",
        "gh-exclude": "README.md", "gh-token": token,
    })
    assert response.status_code == 302
    source = DataSource.objects.get(guru=guru)
    assert source.options == {"branch": "trunk", "include": ["src/**", "README.md"], "exclude": ["README.md"]}
    assert source.access_token == token
    assert source.status == SourceStatus.INDEXED, source.error_message
    assert set(GithubFile.objects.values_list("path", flat=True)) == {"src/relay.py"}
    assert token.encode() not in client.get(url("sources", guru)).content


def test_the_git_form_is_for_any_host_and_refuses_at_submit(
    client: Client, guru: Guru, git_hosts: GitHosting, settings: SettingsWrapper,
) -> None:
    page = client.get(url("sources", guru)).content.decode()
    assert "<summary>Git repository</summary>" in page and "GitHub repository" not in page
    for given, message in [(f"{git_hosts.http.base_url}/nope.git", "repository not found"),
                           (str(git_hosts.root / HOSTED["gitlab"]), "Only staff users can add a local repository"),
                           (f"{git_hosts.https.base_url}/{PRIVATE}", "authentication required")]:
        response = client.post(url("source-add", guru, kind="github"), {"gh-url": given})
        assert response.status_code == 400 and message in response.content.decode(), given
    settings.OPENGURU_FETCH_ALLOWLIST = []
    response = client.post(url("source-add", guru, kind="website"),
                           {"web-url": f"{git_hosts.http.base_url}/docs", "web-mode": "crawl"})
    assert response.status_code == 400
    assert "OPENGURU_FETCH_ALLOWLIST is read when OpenGuru starts: restart it" in response.content.decode()
    assert not DataSource.objects.exists()


def test_staff_may_add_a_local_repository(
    client: Client, guru: Guru, maintainer: Any, git_hosts: GitHosting,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    maintainer.is_staff = True
    maintainer.save(update_fields=["is_staff"])
    path = git_hosts.root / HOSTED["bitbucket"]
    response = post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="github"),
                            {"gh-url": str(path)})
    assert response.status_code == 302
    source = DataSource.objects.get(guru=guru)
    assert (source.url, source.status) == (path.as_uri(), SourceStatus.INDEXED)


# --- validation -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "data", "message"), [
    ("youtube", {"yt-url": "https://www.youtube.com/@celery"}, "is a channel link"),
    ("youtube", {"yt-url": ""}, "This field is required."),
    ("website", {"web-url": "ftp://example.com/", "web-mode": "page"}, "Give an http:// or https:// address."),
    ("website", {"web-url": "not a url", "web-mode": "page"}, "Enter a valid URL."),
    ("website", {"web-url": "https://example.com/", "web-mode": "everything"}, "Select a valid choice."),
    ("website", {"web-url": "https://example.com/", "web-mode": "crawl", "web-max_pages": "100000"},
     "less than or equal to"),
    ("github", {"gh-url": "git@github.com:a/b.git"}, "clone URL"),
    ("github", {"gh-url": "ssh://git@gitlab.com/a/b.git"}, "SSH remotes are not supported"),
    ("github", {"gh-url": "https://github.com/a/b", "gh-include": "x\n" * 101}, "At most 100 include patterns."),
    ("pdf", {}, "Choose at least one PDF file."),
])
def test_invalid_input_shows_the_form_again_with_errors(client: Client, guru: Guru, kind: str,
                                                        data: dict[str, str], message: str) -> None:
    response = client.post(url("source-add", guru, kind=kind), data)
    assert response.status_code == 400
    page = response.content.decode()
    assert message.replace("'", "&#x27;") in page and f'id="add-{kind}" open' in page
    assert not DataSource.objects.exists()


def test_duplicates_and_unknown_kinds_are_refused(client: Client, guru: Guru) -> None:
    existing = DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, url="https://docs.example.com/guide",
                                 title="The guide")
    for again in ("https://docs.example.com/guide", "HTTPS://Docs.Example.com:443/./guide#install"):
        response = client.post(url("source-add", guru, kind="website"), {"web-url": again, "web-mode": "page"})
        page = response.content.decode()
        assert response.status_code == 400 and "This is already a source of this guru: The guide." in page
        assert f'<a href="{url("source", guru, source_id=existing.pk)}">Open it</a>' in page
    assert DataSource.objects.count() == 1
    assert client.post(url("source-add", guru, kind="ftp"), {}).status_code == 404


def test_a_page_a_sitemap_already_indexed_is_added_with_a_warning(
    client: Client, guru: Guru, site: SiteFake, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="website"),
                 {"web-url": f"{site.base_url}/sitemap_index.xml", "web-mode": "sitemap"})
    sitemap = DataSource.objects.get(guru=guru)
    assert sitemap.status == SourceStatus.INDEXED, sitemap.error_message
    covered = sitemap.pages.filter(status="INDEXED").order_by("position").first()
    assert covered is not None
    response = post_indexed(client, django_capture_on_commit_callbacks, url("source-add", guru, kind="website"),
                            {"web-url": covered.url, "web-mode": "page"})
    assert response.status_code == 302 and DataSource.objects.filter(guru=guru).count() == 2
    assert f"This page is already indexed as part of {sitemap}; it was added again as a page of its own." in (
        flashes(response))


def test_a_re_shown_github_form_never_echoes_the_token(client: Client, guru: Guru) -> None:
    response = client.post(url("source-add", guru, kind="github"),
                           {"gh-url": "not a url", "gh-token": "ghp_do_not_echo", "gh-branch": "dev"})
    assert response.status_code == 400
    assert b"ghp_do_not_echo" not in response.content and b'value="dev"' in response.content


# --- table, progress and ETA --------------------------------------------------------------------------------
