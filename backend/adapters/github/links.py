"""Links into a Git host's web pages: the repository's page and a file (and lines) on GitHub, GitLab, Gitea/Forgejo
and Bitbucket; remotes on hosts whose software is unknown link to the repository itself, local ones nowhere."""

from __future__ import annotations

from enum import Enum
from urllib.parse import quote, urlsplit, urlunsplit

from backend.pipeline.ingest_types import RepoSnapshot


class Forge(Enum):
    GITHUB = "github"
    GITLAB = "gitlab"
    GITEA = "gitea"  # Forgejo (Codeberg) keeps Gitea's URLs
    BITBUCKET = "bitbucket"
    UNKNOWN = "unknown"


_KNOWN_HOSTS = {
    "github.com": Forge.GITHUB, "gitlab.com": Forge.GITLAB, "bitbucket.org": Forge.BITBUCKET,
    "codeberg.org": Forge.GITEA, "gitea.com": Forge.GITEA,
}
# Self-hosted instances are usually named after their software (gitlab.example.com, gitea.corp); Bitbucket
# Server's URLs differ from bitbucket.org's, so only the cloud host is recognised.
_HOST_PREFIXES = (("github.", Forge.GITHUB), ("gitlab.", Forge.GITLAB), ("gitea.", Forge.GITEA),
                  ("forgejo.", Forge.GITEA))


def forge_of(host: str) -> Forge:
    """Which software serves the host's web pages, from its name; UNKNOWN when the name does not say."""
    host = host.lower().rstrip(".").removeprefix("www.")
    if host in _KNOWN_HOSTS:
        return _KNOWN_HOSTS[host]
    return next((forge for prefix, forge in _HOST_PREFIXES if host.startswith(prefix)), Forge.UNKNOWN)


def web_url_for(url: str) -> str:
    """The browsable page of an http(s) remote (https://host/owner/repo on a known forge, else the URL as given,
    without credentials); "" for git://, file:// and paths, which a visitor's browser cannot open."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    netloc = parts.netloc.rpartition("@")[2]  # credentials never belong in a citation link
    if forge_of(parts.hostname) is Forge.UNKNOWN:
        return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, ""))
    path = parts.path.rstrip("/").removesuffix(".git")
    host = netloc.lower().removeprefix("www.")
    scheme = "https" if host in _KNOWN_HOSTS else parts.scheme.lower()
    return f"{scheme}://{host}{path}"


def repo_name(url: str) -> str:
    """The repository's name for a title: the last path segment, without ".git"."""
    path = urlsplit(url).path if "://" in url else url
    return path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or url


def _lines(forge: Forge, start: int, end: int | None) -> str:
    if end is None or end == start:
        return f"#lines-{start}" if forge is Forge.BITBUCKET else f"#L{start}"
    return {Forge.GITLAB: f"#L{start}-{end}", Forge.BITBUCKET: f"#lines-{start}:{end}"}.get(
        forge, f"#L{start}-L{end}")


def blob_link(snapshot: RepoSnapshot, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """A file (and lines) on the forge's web pages; the repository's page on an unknown host; "" for local remotes."""
    if not snapshot.web_url:
        return ""
    forge = forge_of(urlsplit(snapshot.web_url).hostname or "")
    if forge is Forge.UNKNOWN:
        return snapshot.web_url
    marker = {Forge.GITLAB: "/-/blob/", Forge.GITEA: "/src/branch/", Forge.BITBUCKET: "/src/"}.get(forge, "/blob/")
    link = f"{snapshot.web_url}{marker}{quote(snapshot.default_branch)}/{quote(path)}"
    return link if start_line is None else link + _lines(forge, start_line, end_line)
