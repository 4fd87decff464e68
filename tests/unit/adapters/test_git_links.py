"""Deep links into each Git host's web pages, the user name a token is sent with, and git's errors in words."""

from __future__ import annotations

import base64

import pytest

from backend.adapters.github.links import Forge, blob_link, forge_of, repo_name, web_url_for
from backend.adapters.github.remote import AUTH_REQUIRED, NOT_FOUND, TOKEN_REFUSED, RemotePolicy, basic_auth, git_error
from backend.adapters.net_guard import BlockedUrlError
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.ingest_types import RepoSnapshot


@pytest.mark.parametrize(("clone_url", "file_link", "lines_link"), [
    ("https://github.com/acme/widgets.git", "https://github.com/acme/widgets/blob/main/docs/a%20b.md",
     "https://github.com/acme/widgets/blob/main/src/x.py#L3-L9"),
    ("https://gitlab.com/group/sub/proj.git", "https://gitlab.com/group/sub/proj/-/blob/main/docs/a%20b.md",
     "https://gitlab.com/group/sub/proj/-/blob/main/src/x.py#L3-9"),
    ("https://gitlab.example.org/team/proj", "https://gitlab.example.org/team/proj/-/blob/main/docs/a%20b.md",
     "https://gitlab.example.org/team/proj/-/blob/main/src/x.py#L3-9"),
    ("https://codeberg.org/forgejo/tool.git", "https://codeberg.org/forgejo/tool/src/branch/main/docs/a%20b.md",
     "https://codeberg.org/forgejo/tool/src/branch/main/src/x.py#L3-L9"),
    ("https://gitea.corp.example:3000/ops/deploy.git",
     "https://gitea.corp.example:3000/ops/deploy/src/branch/main/docs/a%20b.md",
     "https://gitea.corp.example:3000/ops/deploy/src/branch/main/src/x.py#L3-L9"),
    ("https://bitbucket.org/ws/repo.git", "https://bitbucket.org/ws/repo/src/main/docs/a%20b.md",
     "https://bitbucket.org/ws/repo/src/main/src/x.py#lines-3:9"),
    ("https://github.example.com/org/app.git", "https://github.example.com/org/app/blob/main/docs/a%20b.md",
     "https://github.example.com/org/app/blob/main/src/x.py#L3-L9"),
    # Unknown software: the repository as given (credentials dropped), the same for every file.
    ("https://u:p@git.corp.example/r.git", "https://git.corp.example/r.git", "https://git.corp.example/r.git"),
    ("http://127.0.0.1:8080/group/proj.git", "http://127.0.0.1:8080/group/proj.git",
     "http://127.0.0.1:8080/group/proj.git"),
    # Nothing a visitor's browser could open.
    ("git://git.corp.example/r.git", "", ""),
    ("file:///srv/git/r.git", "", ""),
])
def test_each_host_gets_its_own_file_and_line_links(clone_url: str, file_link: str, lines_link: str) -> None:
    snapshot = RepoSnapshot(workdir="/w", default_branch="main", commit="c", web_url=web_url_for(clone_url))
    assert blob_link(snapshot, "docs/a b.md") == file_link
    assert blob_link(snapshot, "src/x.py", 3, 9) == lines_link


def test_single_lines_and_names() -> None:
    for url, anchor in [("https://github.com/a/b", "#L4"), ("https://gitlab.com/a/b", "#L4"),
                        ("https://codeberg.org/a/b", "#L4"), ("https://bitbucket.org/a/b", "#lines-4")]:
        snapshot = RepoSnapshot(workdir="/w", default_branch="dev", commit="c", web_url=web_url_for(url))
        assert blob_link(snapshot, "x.py", 4, 4).endswith(anchor)
    assert web_url_for("https://www.GitHub.com/a/b.git/") == "https://github.com/a/b"
    assert forge_of("gitlab.internal") is Forge.GITLAB and forge_of("git.internal") is Forge.UNKNOWN
    assert [repo_name(u) for u in ("https://gitlab.com/g/sub/proj.git", "file:///srv/r.git/", "/srv/plain")] == [
        "proj", "r", "plain"]


def test_a_token_goes_with_the_user_name_its_host_expects() -> None:
    def user(url: str, token: str) -> str:
        return base64.b64decode(basic_auth(url, token)).decode().partition(":")[0]

    assert user("https://github.com/a/b", "t") == "x-access-token"
    assert user("https://gitlab.com/a/b", "t") == "oauth2"
    assert user("https://bitbucket.org/a/b", "t") == "x-token-auth"
    assert user("https://git.corp/a/b", "alice:t") == "alice"


def test_plain_transports_never_carry_a_token_and_need_the_allow_list() -> None:
    policy = RemotePolicy(allow=("git.corp.example",), resolver=lambda host, port: ["93.184.215.14"])
    for url in ("http://git.corp.example/r.git", "git://git.corp.example/r.git"):
        with pytest.raises(BlockedUrlError, match="only sent over https"):
            policy.config(url, "secret")
    public = RemotePolicy(resolver=lambda host, port: ["93.184.215.14"])
    with pytest.raises(BlockedUrlError, match="travel unencrypted.*restart"):
        public.config("git://git.example.com/r.git", "")
    assert ("protocol.https.allow", "always") in public.config("https://git.example.com/r.git", "")
    pinned = RemotePolicy(allow=("93.184.215.0/24",), resolver=lambda host, port: ["93.184.215.14"])
    assert ("url.git://93.184.215.14:9418/.insteadOf", "git://git.example.com/") in pinned.config(
        "git://git.example.com/r.git", "")


@pytest.mark.parametrize(("stderr", "token", "kind", "words"), [
    ("fatal: repository 'https://h/x.git/' not found", "", PermanentServiceError, NOT_FOUND),
    ("fatal: remote error: no such repository: /x.git", "", PermanentServiceError, NOT_FOUND),
    ("fatal: could not read Username for 'https://h': terminal prompts disabled", "", PermanentServiceError,
     AUTH_REQUIRED),
    ("remote: HTTP Basic: Access denied\nfatal: Authentication failed for 'https://h/'", "tok", PermanentServiceError,
     TOKEN_REFUSED),
    ("fatal: unable to access 'https://h/': Failed to connect to h port 443: Connection refused", "",
     TransientServiceError, "host unreachable"),
    ("fatal: unable to access 'https://h/': Could not resolve host: h", "", TransientServiceError, "host unreachable"),
])
def test_git_errors_say_what_is_wrong(stderr: str, token: str, kind: type[Exception], words: str) -> None:
    error = git_error("ls-remote", stderr, token, "")
    assert isinstance(error, kind) and words in str(error)
