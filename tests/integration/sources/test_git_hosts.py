"""Git sources from any host: the host matrix indexes for real; what would fail later is refused when submitted."""

from __future__ import annotations

import base64
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.github.repo import GitRepoReader
from backend.adapters.net_guard import UrlPolicy
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus.models import Guru
from backend.pipeline.errors import ServiceError
from backend.sources.models import DataSource, GithubFile, SourceKind, SourceStatus
from backend.sources.services import InvalidSource, source_create
from tests.support.git_servers import HOSTED, PRIVATE, GitHosting, free_port
from tests.support.gitrepo import git

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def add(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, url: str, **kwargs: object) -> DataSource:
    with capture(execute=True):
        source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=url, **kwargs)  # type: ignore[arg-type]
    source.refresh_from_db()
    return source


def refused(guru: Guru, url: str, **kwargs: object) -> str:
    with pytest.raises(InvalidSource) as caught:
        source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=url, **kwargs)  # type: ignore[arg-type]
    assert not DataSource.objects.exists(), "a refused source leaves no row"
    return caught.value.detail


MATRIX: dict[str, Callable[[GitHosting], tuple[str, str]]] = {
    # name -> (URL as given, the link its files get: the repository page on an unknown host, none for local ones)
    **{f"http-{forge}": (lambda g, p=path: (f"{g.http.base_url}/{p}", f"{g.http.base_url}/{p}"))
       for forge, path in HOSTED.items()},
    "https-gitlab": lambda g: (f"{g.https.base_url}/{HOSTED['gitlab']}", f"{g.https.base_url}/{HOSTED['gitlab']}"),
    "git-daemon": lambda g: (f"{g.daemon}/{HOSTED['gitlab']}", ""),
    "bare-path": lambda g: (str(g.root / HOSTED["bitbucket"]), ""),
    "file-url": lambda g: ((g.root / HOSTED["github"]).as_uri(), ""),
}


@pytest.mark.parametrize("host", list(MATRIX))
def test_the_host_matrix_indexes(
    host: str, guru: Guru, collection: str, milvus: MilvusVectorStore, git_hosts: GitHosting,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    url, link = MATRIX[host](git_hosts)
    source = add(django_capture_on_commit_callbacks, guru, url, allow_local=True)
    assert source.status == SourceStatus.INDEXED, source.error_message
    assert source.url == (Path(url).as_uri() if url.startswith("/") else url)  # a path is stored as file://
    assert source.title == url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    assert set(GithubFile.objects.values_list("path", "link")) == {("README.md", link), ("src/relay.py", link)}
    hits = milvus.search_dense(collection, registry.embedder().embed_query("heron message"), top_k=10)
    assert {hit.metadata["doc_key"] for hit in hits} == {"README.md", "src/relay.py"}


def test_a_private_repository_needs_its_token_which_is_never_shown(
    guru: Guru, git_hosts: GitHosting, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    https = git_hosts.https
    url = f"{https.base_url}/{PRIVATE}"
    assert "authentication required" in refused(guru, url)
    wrong = "glpat-wrong-token-123456"
    message = refused(guru, url, access_token=wrong)
    assert "the access token was refused" in message and wrong not in message
    assert base64.b64encode(f"oauth2:{wrong}".encode()).decode() not in message
    https.authorizations.clear()
    source = add(django_capture_on_commit_callbacks, guru, url, access_token=https.password)
    assert source.status == SourceStatus.INDEXED, source.error_message
    assert https.authorizations and all(https.credentials_ok(a) for a in https.authorizations)  # check and clone


@pytest.mark.parametrize(("given", "expected"), [
    ("ssh://git@127.0.0.1/a/b.git", "SSH remotes are not supported"),
    ("git@github.com:a/b.git", "clone URL"),
    ("ext::sh -c touch% /tmp/pwned", "clone URL"),
    ("relative/path", "clone URL"),
    ("./relative/path", "absolute path"),
])
def test_urls_git_cannot_fetch_are_refused(guru: Guru, git_hosts: GitHosting, given: str, expected: str) -> None:
    assert expected in refused(guru, given, allow_local=True)


def test_plain_and_internal_remotes_need_the_allow_list_and_say_it_needs_a_restart(
    guru: Guru, git_hosting: GitHosting, settings: SettingsWrapper, tmp_path: Path,
) -> None:
    http, https = git_hosting.http, git_hosting.https
    settings.OPENGURU_FETCH_ALLOWLIST = []
    for url in (f"{http.base_url}/{HOSTED['gitlab']}", f"{git_hosting.daemon}/{HOSTED['gitlab']}"):
        message = refused(guru, url)
        assert "travel unencrypted" in message and "OPENGURU_FETCH_ALLOWLIST" in message
        assert "restart" in message
    url = f"{https.base_url}/{HOSTED['gitlab']}"
    message = refused(guru, url)
    # The same sentence the worker's clone would have failed with, minutes later.
    with pytest.raises(ServiceError) as worker:
        GitRepoReader(policy=UrlPolicy()).snapshot(url, workdir=str(tmp_path / "w"))
    assert message == str(worker.value)
    assert "private, loopback or link-local" in message and "restart" in message
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1"]
    assert "An access token is only sent over https://" in refused(guru, f"{http.base_url}/{PRIVATE}",
                                                                    access_token="t0ken")


def test_unreachable_missing_and_empty_repositories_are_refused(
    guru: Guru, git_hosts: GitHosting,
) -> None:
    http, daemon, served = git_hosts.http, git_hosts.daemon, git_hosts.root
    assert "host unreachable" in refused(guru, f"http://127.0.0.1:{free_port()}/a/b.git")
    for url in (f"{http.base_url}/nope/missing.git", f"{daemon}/missing.git"):
        assert "repository not found" in refused(guru, url)
    assert "repository not found" in refused(guru, str(served / "missing.git"), allow_local=True)
    assert "host unreachable: The host 'git.nowhere.invalid' does not resolve" in refused(
        guru, "https://git.nowhere.invalid/a/b.git")
    assert refused(guru, f"{http.base_url}/empty.git") == (
        "This repository cannot be fetched: The repository is empty: it has no commits to index.")
    assert "branch 'nope' does not exist" in refused(guru, f"{http.base_url}/{HOSTED['gitea']}",
                                                     options={"branch": "nope"})


def test_local_repositories_are_for_staff_and_only_when_enabled(
    guru: Guru, git_hosts: GitHosting, settings: SettingsWrapper,
) -> None:
    path = git_hosts.root / HOSTED["gitlab"]
    for url in (str(path), path.as_uri()):
        assert "Only staff users can add a local repository" in refused(guru, url)
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = False
    assert "OPENGURU_GIT_ALLOW_FILE_URLS is off" in refused(guru, str(path), allow_local=True)


def test_the_same_repository_again_is_already_a_source(
    guru: Guru, git_hosts: GitHosting, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    http, served = git_hosts.http, git_hosts.root
    first = add(django_capture_on_commit_callbacks, guru, f"{http.base_url}/{HOSTED['gitlab']}")
    from backend.sources.validation import AlreadyASource

    for again in (f"{http.base_url}/{HOSTED['gitlab']}", f"{http.base_url.upper()}/{HOSTED['gitlab'][:-4]}/"):
        with pytest.raises(AlreadyASource) as caught:
            source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=again)
        assert caught.value.source == first and "already a source" in caught.value.detail
    local = add(django_capture_on_commit_callbacks, guru, str(served / HOSTED["github"]), allow_local=True)
    with pytest.raises(AlreadyASource):
        source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=local.url, allow_local=True)
    assert DataSource.objects.count() == 2


def test_git_daemon_is_reached_at_the_address_the_guard_checked(git_hosting: GitHosting, tmp_path: Path) -> None:
    # The name is not in DNS: a clone that works proves git:// went to the pinned, already-checked address.
    port = git_hosting.daemon.rsplit(":", 1)[1]
    reader = GitRepoReader(policy=UrlPolicy(allow=("127.0.0.0/8",)), resolver=lambda host, port: ["127.0.0.1"])
    url = f"git://git.nowhere.invalid:{port}/{HOSTED['gitea']}"
    assert reader.check(url) == "trunk"
    snapshot = reader.snapshot(url, workdir=str(tmp_path / "w"))
    assert {f.path for f in snapshot.files} == {"README.md", "src/relay.py"}
    assert git(tmp_path / "w", "config", "--get", "remote.origin.url").strip() == url  # the name, not the address


def test_a_remote_that_never_answers_is_refused_after_the_check_timeout(
    guru: Guru, git_hosts: GitHosting, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_GIT_CHECK_TIMEOUT = 1
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/{HOSTED['gitlab']}"
        assert "git ls-remote timed out after 1 s: host unreachable (no answer)" in refused(guru, url)
