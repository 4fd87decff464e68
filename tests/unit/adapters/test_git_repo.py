"""GitRepoReader against real local repositories over file://: filtering, re-sync in place, URL policy, secrets."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from backend.adapters.github.repo import GitRepoReader, blob_link, glob_regex, language_for, web_url_for
from backend.adapters.net_guard import BlockedUrlError, UrlPolicy
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError
from backend.pipeline.ingest_types import RepoSnapshot
from tests.support.gitrepo import commit_all, git, write_files

MAX_BYTES = 2000
TOKEN = "ghp_SuperSecretToken1234567890"
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
INDEXED = {
    "src/app.py": "def main():\n    return 1\n",
    "src/util.ts": "export const x = 1;\n",
    "README.md": "# Demo\n",
    "docs/guide/intro.md": "Intro\n",
    "docs/guide/deep/nested.rst": "Nested\n======\n",
    "docs/ünï code.md": "odd name\n",
    "config/settings.yaml": "a: 1\n",
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "package.json": "{}\n",
    "Dockerfile": "FROM python:3.11\n",
    "Makefile": "all:\n\ttrue\n",
    "LICENSE": "MIT\n",
}
SKIPPED = {
    "node_modules/lib/index.js": "module.exports = 1;\n",
    "node_modules/other/deep/x.js": "1;\n",
    "pkg/vendor/dep.go": "package dep\n",
    "package-lock.json": "{}\n",
    "yarn.lock": "# lock\n",
    "logo.png": "not really a png\n",
    "big.txt": "x" * (MAX_BYTES + 1),
    "data.txt": "text\0with a NUL byte\n",
}


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A repository whose only branch is "trunk" (not main/master), with files of every category."""
    root = tmp_path / "origin"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    write_files(root, {**INDEXED, **SKIPPED})
    os.symlink("/etc/passwd", root / "escape.md")
    commit_all(root, "initial")
    return root


@pytest.fixture
def reader() -> GitRepoReader:
    return GitRepoReader(policy=UrlPolicy(), max_file_bytes=MAX_BYTES, timeout=60, allow_file_urls=True)


def url_of(root: Path) -> str:
    return root.as_uri()


def shas(snapshot: RepoSnapshot) -> dict[str, str]:
    return {f.path: f.blob_sha for f in snapshot.files}


def test_snapshot_lists_exactly_the_indexable_files_with_git_blob_shas(
    origin: Path, reader: GitRepoReader, tmp_path: Path
) -> None:
    snapshot = reader.snapshot(url_of(origin), workdir=str(tmp_path / "work"))
    assert snapshot.default_branch == "trunk"
    assert snapshot.commit == git(origin, "rev-parse", "HEAD").strip()
    assert snapshot.web_url == ""  # a path on the worker is no page a visitor can open
    assert set(shas(snapshot)) == set(INDEXED)
    for path, sha in shas(snapshot).items():
        assert sha == git(origin, "hash-object", "--", path).strip(), path
        assert next(f.size for f in snapshot.files if f.path == path) == len(INDEXED[path].encode())
    assert dict(snapshot.skipped) == {
        "node_modules/": "vendored or generated directory",
        "pkg/vendor/": "vendored or generated directory",
        "package-lock.json": "lock file",
        "yarn.lock": "lock file",
        "logo.png": "file type not indexed",
        "big.txt": f"larger than {MAX_BYTES} bytes",
        "data.txt": "binary file",
        "escape.md": "symbolic link",
    }
    assert reader.read(snapshot, "src/app.py") == INDEXED["src/app.py"]
    assert reader.read(snapshot, "docs/ünï code.md") == "odd name\n"


def test_resync_fetches_into_the_same_clone_and_changes_show_in_blob_shas(
    origin: Path, reader: GitRepoReader, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    before = reader.snapshot(url_of(origin), workdir=str(workdir))
    (workdir / ".git" / "openguru-marker").write_text("still the same clone")
    (workdir / "stray.py").write_text("left behind by someone\n")
    inode = workdir.stat().st_ino

    write_files(origin, {"src/app.py": "def main():\n    return 2\n", "src/new.go": "package main\n"})
    (origin / "docs/guide/intro.md").unlink()
    commit_all(origin)
    after = reader.snapshot(url_of(origin), workdir=str(workdir))

    assert (workdir / ".git" / "openguru-marker").exists(), "re-sync must not re-clone"
    assert workdir.stat().st_ino == inode
    assert not (workdir / "stray.py").exists(), "untracked files are cleaned"
    assert after.commit == git(origin, "rev-parse", "HEAD").strip() != before.commit
    old, new = shas(before), shas(after)
    assert {p for p in old.keys() & new.keys() if old[p] != new[p]} == {"src/app.py"}
    assert old.keys() - new.keys() == {"docs/guide/intro.md"}
    assert new.keys() - old.keys() == {"src/new.go"}
    assert new["src/new.go"] == git(origin, "hash-object", "src/new.go").strip()
    assert reader.read(after, "src/app.py") == "def main():\n    return 2\n"


def test_a_workdir_holding_another_repository_is_recloned(origin: Path, reader: GitRepoReader, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    write_files(other, {"only.md": "other repo\n"})
    commit_all(other)
    workdir = tmp_path / "work"
    reader.snapshot(url_of(other), workdir=str(workdir))
    (workdir / ".git" / "openguru-marker").write_text("x")

    snapshot = reader.snapshot(url_of(origin), workdir=str(workdir))
    assert not (workdir / ".git" / "openguru-marker").exists()
    assert set(shas(snapshot)) == set(INDEXED)


def test_explicit_branch_and_missing_branch(origin: Path, reader: GitRepoReader, tmp_path: Path) -> None:
    git(origin, "checkout", "-q", "-b", "feature")
    write_files(origin, {"feature.md": "only on feature\n"})
    commit_all(origin)
    git(origin, "checkout", "-q", "trunk")
    workdir = str(tmp_path / "work")

    snapshot = reader.snapshot(url_of(origin), branch="feature", workdir=workdir)
    assert snapshot.default_branch == "feature" and "feature.md" in shas(snapshot)
    with pytest.raises(PermanentServiceError, match="branch 'nope' does not exist"):
        reader.snapshot(url_of(origin), branch="nope", workdir=workdir)  # fetch into the existing clone
    with pytest.raises(PermanentServiceError, match="branch 'nope' does not exist"):
        reader.snapshot(url_of(origin), branch="nope", workdir=str(tmp_path / "fresh"))  # first clone
    with pytest.raises(PermanentServiceError, match="not a valid branch"):
        reader.snapshot(url_of(origin), branch="--upload-pack=touch /tmp/pwned", workdir=workdir)


def test_include_and_exclude_globs(origin: Path, reader: GitRepoReader, tmp_path: Path) -> None:
    snapshot = reader.snapshot(url_of(origin), include=["docs/**", "*.py"], exclude=["**/deep/**"],
                               workdir=str(tmp_path / "work"))
    assert set(shas(snapshot)) == {"docs/guide/intro.md", "docs/ünï code.md", "src/app.py"}
    reasons = dict(snapshot.skipped)
    assert reasons["docs/guide/deep/nested.rst"] == "excluded by a glob"
    assert reasons["README.md"] == "not matched by the include globs"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [("docs/**", "docs/a/b.md", True), ("docs/**", "src/docs/a.md", False), ("*.md", "a/b/c.md", True),
     ("src/**/*.py", "src/a.py", True), ("src/**/*.py", "src/x/y/a.py", True), ("src/*.py", "src/x/a.py", False),
     ("tests/", "tests/unit/a.py", True), ("/README.md", "README.md", True), ("file?.[ch]", "lib/file1.c", True),
     ("file?.[!ch]", "lib/file1.c", False)],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


def test_skipped_list_is_capped(tmp_path: Path, reader: GitRepoReader) -> None:
    root = tmp_path / "many"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_files(root, {f"img/{i}.png": "x" for i in range(1100)} | {"a.md": "a\n"})
    commit_all(root)
    snapshot = reader.snapshot(url_of(root), workdir=str(tmp_path / "work"))
    assert len(snapshot.skipped) == 1000 and set(shas(snapshot)) == {"a.md"}


def test_url_policy_refuses_file_urls_unless_allowed_and_internal_hosts(origin: Path, tmp_path: Path) -> None:
    strict = GitRepoReader(policy=UrlPolicy())
    workdir = tmp_path / "work"
    for url in (url_of(origin), "http://127.0.0.1/repo.git", "https://127.0.0.1/repo.git", "ssh://github.com/a/b",
                str(origin), "ext::sh -c touch% /tmp/pwned"):
        with pytest.raises(BlockedUrlError):
            strict.snapshot(url, workdir=str(workdir))
    assert not workdir.exists(), "git never ran"
    with pytest.raises(PermanentServiceError, match="not a valid repository URL"):
        strict.snapshot("https://github.com:port/a/b", workdir=str(workdir))
    resolving = GitRepoReader(policy=UrlPolicy(), resolver=lambda host, port: ["10.0.0.5"])
    with pytest.raises(BlockedUrlError, match="private"):
        resolving.snapshot("https://git.example.com/a/b.git", workdir=str(workdir))


def test_token_is_never_stored_in_the_clone(origin: Path, reader: GitRepoReader, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    reader.snapshot(url_of(origin), token=TOKEN, workdir=str(workdir))
    reader.snapshot(url_of(origin), token=TOKEN, workdir=str(workdir))
    stored = b"".join(p.read_bytes() for p in (workdir / ".git").rglob("*") if p.is_file())
    assert TOKEN.encode() not in stored and BASIC.encode() not in stored


def test_token_is_redacted_from_errors_of_an_unreachable_remote(tmp_path: Path) -> None:
    reader = GitRepoReader(policy=UrlPolicy(allow=("127.0.0.1",)), timeout=30)
    started = time.monotonic()
    with pytest.raises(ServiceError) as caught:
        reader.snapshot("https://127.0.0.1:9/owner/repo.git", token=TOKEN, workdir=str(tmp_path / "work"))
    assert time.monotonic() - started < 20
    assert isinstance(caught.value, TransientServiceError)
    assert TOKEN not in str(caught.value) and BASIC not in str(caught.value)


def test_git_connects_to_the_address_the_guard_checked_not_a_fresh_dns_answer(tmp_path: Path) -> None:
    # The host does not exist in DNS: reaching "connect" proves git used the pinned, already-checked address.
    reader = GitRepoReader(policy=UrlPolicy(allow=("127.0.0.0/8",)), resolver=lambda host, port: ["127.0.0.1"])
    with pytest.raises(TransientServiceError, match="Failed to connect to git.nowhere.invalid port 9"):
        reader.snapshot("https://git.nowhere.invalid:9/a/b.git", workdir=str(tmp_path / "work"))


def fake_git(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-git"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_token_travels_in_the_environment_not_argv_and_is_redacted(tmp_path: Path) -> None:
    log = tmp_path / "log"
    body = (f'echo "$@" > {log}; env >> {log}; echo "fatal: Authentication failed" >&2; '
            "env | grep Authorization >&2; exit 128")
    reader = GitRepoReader(policy=UrlPolicy(allow=("git.example.com",)), git_binary=fake_git(tmp_path, body))
    with pytest.raises(PermanentServiceError, match="the access token was refused") as caught:
        reader.snapshot("https://git.example.com/a/b.git", token=TOKEN, workdir=str(tmp_path / "w"))
    argv, *env = log.read_text().splitlines()
    assert argv == "ls-remote --symref -- https://git.example.com/a/b.git HEAD"
    assert f"Authorization: Basic {BASIC}" in {line.partition("=")[2] for line in env}
    assert "GIT_TERMINAL_PROMPT=0" in env and "GIT_CONFIG_NOSYSTEM=1" in env and "GIT_ASKPASS" not in log.read_text()
    assert f"HOME={Path.home()}" not in env
    assert BASIC not in str(caught.value) and "***" in str(caught.value)


def test_git_errors_map_to_service_errors(tmp_path: Path) -> None:
    missing = GitRepoReader(policy=UrlPolicy(), git_binary=str(tmp_path / "no-git"), allow_file_urls=True)
    with pytest.raises(PermanentServiceError, match="git is not installed on the worker"):
        missing.snapshot((tmp_path / "x").as_uri(), workdir=str(tmp_path / "w"))
    real = GitRepoReader(policy=UrlPolicy(), allow_file_urls=True)
    with pytest.raises(PermanentServiceError, match="repository not found: the repository does not exist"):
        real.snapshot((tmp_path / "nowhere").as_uri(), workdir=str(tmp_path / "w"))
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    with pytest.raises(PermanentServiceError, match="empty"):
        real.snapshot(empty.as_uri(), workdir=str(tmp_path / "w"))
    slow = GitRepoReader(policy=UrlPolicy(), git_binary=fake_git(tmp_path, "sleep 30"), timeout=0.5,
                         allow_file_urls=True)
    started = time.monotonic()
    with pytest.raises(TransientServiceError, match="timed out"):
        slow.snapshot((tmp_path / "x").as_uri(), workdir=str(tmp_path / "w"))
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("path", ["../origin/README.md", "/etc/passwd", "escape.md", ".git/config", "src/../../x", ""])
def test_read_refuses_paths_outside_the_checkout(
    path: str, origin: Path, reader: GitRepoReader, tmp_path: Path
) -> None:
    snapshot = reader.snapshot(url_of(origin), workdir=str(tmp_path / "work"))
    with pytest.raises(PermanentServiceError):
        reader.read(snapshot, path)


@pytest.mark.parametrize(
    ("path", "language"),
    [("a/b.py", "python"), ("x.js", "js"), ("x.jsx", "js"), ("x.ts", "ts"), ("x.tsx", "ts"), ("m.go", "go"),
     ("lib.rs", "rust"), ("A.java", "java"), ("k.kt", "kotlin"), ("x.cpp", "cpp"), ("x.h", "c"), ("p.cs", "csharp"),
     ("r.rb", "ruby"), ("README.md", "markdown"), ("x.MDX", "markdown"), ("i.rst", "rst"), ("e.exs", "elixir"),
     ("h.hs", "haskell"), ("s.sh", ""), ("q.sql", ""), ("c.yaml", ""), ("Makefile", ""), ("notes.txt", "")],
)
def test_language_for(path: str, language: str) -> None:
    assert language_for(path) == language


def test_web_url_and_blob_links() -> None:
    assert web_url_for("https://github.com/acme/widgets.git") == "https://github.com/acme/widgets"
    assert web_url_for("https://tok@gitlab.com/group/sub/proj.git/") == "https://gitlab.com/group/sub/proj"
    assert web_url_for("https://u:p@git.corp.example:8443/r.git") == "https://git.corp.example:8443/r.git"
    github = RepoSnapshot(workdir="/w", default_branch="trunk", commit="c", web_url="https://github.com/acme/w")
    assert blob_link(github, "docs/a b.md") == "https://github.com/acme/w/blob/trunk/docs/a%20b.md"
    assert blob_link(github, "src/x.py", 3, 9) == "https://github.com/acme/w/blob/trunk/src/x.py#L3-L9"
    assert blob_link(github, "src/x.py", 4, 4) == "https://github.com/acme/w/blob/trunk/src/x.py#L4"
    gitlab = RepoSnapshot(workdir="/w", default_branch="main", commit="c", web_url="https://gitlab.com/g/p")
    assert blob_link(gitlab, "x.py", 1, 2) == "https://gitlab.com/g/p/-/blob/main/x.py#L1-2"
    local = RepoSnapshot(workdir="/w", default_branch="main", commit="c", web_url="")
    assert blob_link(local, "src/x.py", 1, 2) == ""
