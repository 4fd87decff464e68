"""Git repositories read with the git CLI: shallow clone or re-sync, a filtered file list and safe reads."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from backend.adapters.github.links import blob_link, web_url_for
from backend.adapters.github.remote import Config, RemotePolicy, git_error
from backend.adapters.net_guard import Resolver, UrlPolicy, system_resolver
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError
from backend.pipeline.ingest_types import RepoFile, RepoSnapshot

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_FILES = 10_000
DEFAULT_CHECK_TIMEOUT = 8.0
MAX_SKIPPED = 1000
_BINARY_PROBE = 8192

SKIP_DIRS = frozenset(
    "node_modules vendor third_party dist build target out .git __pycache__ .venv venv .tox .mypy_cache "
    ".pytest_cache .next .cache coverage site-packages".split()
)
CODE_EXTENSIONS = frozenset(
    "py js ts tsx jsx go rs java kt scala c h cc cpp hpp cs rb php swift m sh sql proto lua r jl ex exs hs ml "
    "clj dart vue svelte".split()
)
DOC_EXTENSIONS = frozenset("md mdx rst txt adoc".split())
CONFIG_EXTENSIONS = frozenset("toml yaml yml json ini cfg".split())
LOCK_FILES = frozenset(
    "package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml poetry.lock Pipfile.lock uv.lock Cargo.lock "
    "composer.lock Gemfile.lock go.sum".split()
)
MANIFESTS = frozenset(
    "Dockerfile Makefile README LICENSE CHANGELOG CONTRIBUTING package.json pyproject.toml requirements.txt "
    "setup.py setup.cfg Cargo.toml go.mod pom.xml build.gradle Gemfile composer.json".split()
)
__all__ = ["GitRepoReader", "blob_link", "glob_regex", "language_for", "web_url_for"]
# Extension -> langchain_text_splitters.Language value; filtered against the installed enum in language_for.
_LANGUAGES = {
    "py": "python", "js": "js", "jsx": "js", "mjs": "js", "cjs": "js", "ts": "ts", "tsx": "ts", "go": "go",
    "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala", "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "cs": "csharp", "rb": "ruby",
    "php": "php", "swift": "swift", "proto": "proto", "lua": "lua", "r": "r", "ex": "elixir", "exs": "elixir",
    "hs": "haskell", "md": "markdown", "mdx": "markdown", "rst": "rst", "sol": "sol", "tex": "latex",
    "html": "html", "htm": "html", "ps1": "powershell", "pl": "perl", "cbl": "cobol",
}
# git refuses these in ref names anyway; checking first keeps a leading "-" from being read as an option.
_BAD_BRANCH = re.compile(r"^-|\.\.|@\{|[\s~^:?*\[\\\x00-\x1f\x7f]|\.lock$|/$|^/|\.$")


def language_for(path: str) -> str:
    """The langchain_text_splitters.Language value for a file, or "" when no splitter knows the language."""
    name = PurePosixPath(path).name
    value = _LANGUAGES.get(name.rsplit(".", 1)[-1].lower(), "") if "." in name else ""
    return value if value in _known_languages() else ""


@functools.cache
def _known_languages() -> frozenset[str]:
    from langchain_text_splitters import Language  # imported late: only ingestion needs the splitters

    return frozenset(member.value for member in Language)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A `**`-aware glob as a regex over repo-relative paths.

    Like .gitignore: a pattern without "/" matches the file name at any depth, a trailing "/" means
    everything below that directory, `**/` spans zero or more directories and `*` stays inside one.
    """
    glob = pattern.strip().lstrip("/")
    glob = glob + "**" if glob.endswith("/") else glob
    glob = glob if "/" in glob else "**/" + glob
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] in "*?":
            out.append("[^/]*" if glob[i] == "*" else "[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.S)


class _FileFilter:
    """Decides which files of a tree are worth indexing, and says why the others are not."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str], max_file_bytes: int) -> None:
        self._include = [glob_regex(p) for p in include if p.strip()]
        self._exclude = [glob_regex(p) for p in exclude if p.strip()]
        self._max_file_bytes = max_file_bytes

    @staticmethod
    def skipped_dir(path: str) -> str:
        """The outermost vendored or generated directory containing path, or ""."""
        parts = path.split("/")[:-1]
        for depth, part in enumerate(parts):
            if part in SKIP_DIRS:
                return "/".join(parts[: depth + 1]) + "/"
        return ""

    def reason(self, path: str, size: int) -> str:
        """Why the file is left out, or "" to keep it (the binary check needs the content and comes later)."""
        if any(rx.fullmatch(path) for rx in self._exclude):
            return "excluded by a glob"
        if self._include and not any(rx.fullmatch(path) for rx in self._include):
            return "not matched by the include globs"
        name = PurePosixPath(path).name
        if name in LOCK_FILES:
            return "lock file"
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        known = ext in CODE_EXTENSIONS or ext in DOC_EXTENSIONS or ext in CONFIG_EXTENSIONS
        if not known and name not in MANIFESTS and name.split(".", 1)[0] not in MANIFESTS:
            return "file type not indexed"
        if size > self._max_file_bytes:
            return f"larger than {self._max_file_bytes} bytes"
        return ""


class GitRepoReader:
    """RepoReader on the git CLI: shallow clones re-synced in place, never a shell, never a stored token."""

    def __init__(self, *, policy: UrlPolicy, git_binary: str = "git", max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 timeout: float = 300, allow_file_urls: bool = False, resolver: Resolver = system_resolver,
                 max_files: int = DEFAULT_MAX_FILES, check_timeout: float = DEFAULT_CHECK_TIMEOUT,
                 ca_bundle: str = "") -> None:
        # https anywhere public; http and git:// (clear text, and no tokens) only to allow-listed hosts.
        self._remotes = RemotePolicy(allow=policy.allow, allow_file_urls=allow_file_urls, resolver=resolver,
                                     ca_bundle=ca_bundle)
        self._git_binary = git_binary
        self._max_file_bytes = max_file_bytes
        self._timeout = timeout
        self._check_timeout = check_timeout
        self._max_files = max_files

    def check(self, url: str, *, branch: str = "", token: str = "") -> str:
        """Whether the remote can be cloned, within a few seconds: the branch that would be indexed, else raises.

        The same URL policy and token as a clone, so what passes here is what the worker will fetch.
        """
        url = url.strip()
        config = self._remotes.config(url, token)
        branch = branch.strip()
        if branch and _BAD_BRANCH.search(branch):
            raise PermanentServiceError(f"{branch!r} is not a valid branch name.")
        refs = ["HEAD", *([f"refs/heads/{branch}"] if branch else [])]
        out = self._git(["ls-remote", "--symref", "--", url, *refs], config=config, token=token, url=url,
                        timeout=self._check_timeout).decode()
        if branch:
            if f"\trefs/heads/{branch}" not in out:
                raise PermanentServiceError(f"The branch {branch!r} does not exist in the repository.")
            return branch
        return _head_branch(out)

    def snapshot(self, url: str, *, branch: str = "", token: str = "", include: Sequence[str] = (),
                 exclude: Sequence[str] = (), workdir: str) -> RepoSnapshot:
        """Clone (or fetch into an existing clone of the same URL) and list the files worth indexing."""
        url = url.strip()
        config = self._remotes.config(url, token)
        branch = branch.strip() or self._default_branch(url, config, token)
        if _BAD_BRANCH.search(branch):
            raise PermanentServiceError(f"{branch!r} is not a valid branch name.")
        root = Path(workdir)
        self._sync(url, branch, root, config, token)
        commit = self._git(["rev-parse", "HEAD"], cwd=root).decode().strip()
        files, skipped = self._list_files(root, _FileFilter(include, exclude, self._max_file_bytes))
        return RepoSnapshot(workdir=str(root), default_branch=branch, commit=commit, web_url=web_url_for(url),
                            files=tuple(files), skipped=tuple(skipped))

    def read(self, snapshot: RepoSnapshot, path: str) -> str:
        """A file's text (UTF-8, undecodable bytes replaced); paths leaving the checkout are refused."""
        root = Path(snapshot.workdir).resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root) or target == root or target.relative_to(root).parts[0] == ".git":
            raise PermanentServiceError(f"The path {path!r} is outside the repository checkout.")
        try:
            with target.open("rb") as handle:
                return handle.read(self._max_file_bytes).decode("utf-8", errors="replace")
        except OSError as exc:
            raise PermanentServiceError(f"Cannot read {path!r} from the checkout: {exc.strerror}.") from exc

    def _default_branch(self, url: str, config: Config, token: str) -> str:
        out = self._git(["ls-remote", "--symref", "--", url, "HEAD"], config=config, token=token, url=url)
        return _head_branch(out.decode())

    def _sync(self, url: str, branch: str, root: Path, config: Config, token: str) -> None:
        if self._is_clone_of(root, url):
            fetch = ["fetch", "--depth", "1", "--no-tags", "origin", f"refs/heads/{branch}"]
            self._git(fetch, cwd=root, config=config, token=token, branch=branch, url=url)
            self._git(["reset", "--hard", "FETCH_HEAD"], cwd=root)
            # -ff also removes untracked nested repositories, so nothing outside HEAD survives a re-sync.
            self._git(["clean", "-ffdx"], cwd=root)
            return
        if root.is_dir() and not root.is_symlink():
            shutil.rmtree(root)
        elif root.exists() or root.is_symlink():
            root.unlink()
        root.parent.mkdir(parents=True, exist_ok=True)
        clone = ["clone", "--depth", "1", "--single-branch", "--branch", branch, "--no-tags", "--", url, str(root)]
        self._git(clone, config=config, token=token, branch=branch, url=url)

    def _is_clone_of(self, root: Path, url: str) -> bool:
        if not (root / ".git").is_dir():
            return False
        try:
            origin = self._git(["config", "--get", "remote.origin.url"], cwd=root).decode().strip()
        except ServiceError:
            return False  # a broken or half-written clone: start over
        return origin == url

    def _list_files(self, root: Path, rules: _FileFilter) -> tuple[list[RepoFile], list[tuple[str, str]]]:
        files: list[RepoFile] = []
        skipped: list[tuple[str, str]] = []
        seen_dirs: set[str] = set()

        def skip(path: str, reason: str) -> None:
            if len(skipped) < MAX_SKIPPED:
                skipped.append((path, reason))

        for entry in self._git(["ls-tree", "-r", "-l", "-z", "HEAD"], cwd=root).split(b"\0"):
            if not entry:
                continue
            meta, _, raw_path = entry.partition(b"\t")
            mode, kind, sha, size = meta.decode().split()
            path = raw_path.decode("utf-8", errors="replace")
            directory = rules.skipped_dir(path)
            if directory:
                if directory not in seen_dirs:
                    seen_dirs.add(directory)
                    skip(directory, "vendored or generated directory")
                continue
            if kind != "blob" or mode == "120000":
                skip(path, "submodule" if kind == "commit" else "symbolic link")
                continue
            reason = "undecodable file name" if "\ufffd" in path else rules.reason(path, int(size))
            if not reason and _is_binary(root / path):
                reason = "binary file"
            if reason:
                skip(path, reason)
            else:
                files.append(RepoFile(path=path, blob_sha=sha, size=int(size)))
                if len(files) > self._max_files:
                    # Stop listing here: each kept file costs a read of its head (the binary probe).
                    raise PermanentServiceError(
                        f"stopped: this repository has more than {self._max_files:,} files to index "
                        "(OPENGURU_GITHUB_MAX_FILES); narrow it with include or exclude globs")
        return files, skipped

    def _git(self, args: list[str], *, cwd: Path | None = None, config: Sequence[tuple[str, str]] = (),
             token: str = "", branch: str = "", url: str = "", timeout: float | None = None) -> bytes:
        """Run git without a shell, with a clean config, a time limit and errors mapped to service errors."""
        with tempfile.TemporaryDirectory(prefix="openguru-git-home-") as home:
            env = _git_env(home, config)
            try:
                proc = subprocess.Popen([self._git_binary, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            except FileNotFoundError as exc:
                raise PermanentServiceError("git is not installed on the worker.") from exc
            try:
                out, err = proc.communicate(timeout=timeout or self._timeout)
            except subprocess.TimeoutExpired as exc:
                # git forks helpers (git-remote-https) that hold the pipes open: kill the whole group.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                unreachable = ": host unreachable (no answer)" if timeout else ""
                raise TransientServiceError(
                    f"git {args[0]} timed out after {timeout or self._timeout:g} s{unreachable}.") from exc
        if proc.returncode != 0:
            raise git_error(args[0], err.decode("utf-8", errors="replace"), token, branch, url)
        return out


def _git_env(home: str, config: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The environment of a git call: no inherited git settings, no prompts, no user or system config.

    HOME is an empty directory so that ~/.netrc and credential files of the worker are never sent to a
    user-supplied host. The config (the token included) travels in GIT_CONFIG_* variables: unlike
    command-line arguments they are not visible to other users in the process list, and never reach disk.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in ("SSH_ASKPASS", "HOME")}
    env.update(HOME=home, LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_COUNT=str(len(config)))
    for index, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _head_branch(ls_remote: str) -> str:
    """The branch HEAD points at, from `git ls-remote --symref … HEAD`."""
    for line in ls_remote.splitlines():
        ref, _, name = line.partition("\t")
        if name == "HEAD" and ref.startswith("ref: refs/heads/"):
            return ref.removeprefix("ref: refs/heads/")
    if not ls_remote.strip():
        raise PermanentServiceError("The repository is empty: it has no commits to index.")
    raise PermanentServiceError("The repository does not name a default branch; set the branch to index.")


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(_BINARY_PROBE)
    except OSError:
        return True  # unreadable in the checkout: nothing to index either way

