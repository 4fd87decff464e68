"""Submit-time checks of a new source: what the worker would refuse or fail on is refused before a row exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from backend.adapters import registry
from backend.adapters.github.links import Forge, forge_of
from backend.adapters.github.remote import FILE_REFUSED
from backend.adapters.net_guard import BlockedUrlError, check_url
from backend.core.errors import AppError, Conflict
from backend.gurus.models import Guru
from backend.pipeline.discovery import normalize_url
from backend.pipeline.errors import ServiceError
from backend.pipeline.youtube_urls import parse_youtube_url
from backend.sources.models import DataSource, SourceKind
from backend.sources.selectors import source_covering_url

LOCAL_FOR_STAFF = ("Only staff users can add a local repository (a path or file:// URL on the server); "
                   "give its https:// clone URL.")
_PATH_PREFIXES = ("/", "./", "../", "~")


def token_for(url: str, token: str) -> str:
    """The source's own token, else the instance's OPENGURU_GITHUB_TOKEN, which is only ever sent to github.com."""
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    return token or (settings.OPENGURU_GITHUB_TOKEN if host == "github.com" else "")


class InvalidSource(AppError):
    code = "invalid_source"


class AlreadyASource(Conflict):
    """The guru already has a source at this URL (compared normalised); `source` is that source."""

    def __init__(self, detail: str, *, source: DataSource) -> None:
        super().__init__(detail)
        self.source = source


def url_key(kind: str, url: str) -> str:
    """What makes two URLs the same source: normalised; a repository without ".git" or "/"; a video by its id."""
    if kind == SourceKind.YOUTUBE:
        try:
            ref = parse_youtube_url(url)
        except ValueError:
            return url
        return f"youtube:{ref.kind}:{ref.id}"
    try:
        key = normalize_url(url)
    except ValueError:
        return url
    return key.rstrip("/").removesuffix(".git") if kind == SourceKind.GITHUB_REPO else key


def source_with_url(*, guru: Guru, kind: str, url: str) -> DataSource | None:
    """The guru's source at the same URL: identical, or of the same kind with the same url_key."""
    same = DataSource.objects.filter(guru=guru, url=url).first()
    if same is not None or not url:
        return same
    candidates = DataSource.objects.filter(guru=guru, kind=kind).exclude(url="")
    host = (urlsplit(url).hostname or "") if kind != SourceKind.YOUTUBE else ""
    if host:
        candidates = candidates.filter(url__icontains=host)
    wanted = url_key(kind, url)
    return next((s for s in candidates.order_by("pk") if url_key(kind, s.url) == wanted), None)


def looks_like_repository(target: str) -> bool:
    """Whether a target names a Git repository: a `.git` URL, a git:// or file:// one, a known forge's host, or a
    directory (a terminal's guess; the dashboard and the API are told the kind)."""
    lowered = target.lower()
    if lowered.rstrip("/").endswith(".git") or lowered.startswith(("git://", "file://")) or Path(target).is_dir():
        return True
    host = urlsplit(target).hostname if "://" in target else None
    return bool(host) and forge_of(host or "") is not Forge.UNKNOWN


def local_repository_url(url: str) -> str | None:
    """A local repository as a file:// URL (from an absolute path or file://); None for a remote URL."""
    if url.lower().startswith("file://"):
        return url
    if not url.startswith(_PATH_PREFIXES):
        return None
    path = Path(url).expanduser()
    if not path.is_absolute():
        raise InvalidSource("Give the local repository's absolute path (e.g. /srv/git/project.git).")
    return path.as_uri()


def _repository(url: str, options: dict[str, Any], token: str, allow_local: bool) -> str:
    local = local_repository_url(url)
    if local is not None:
        if not allow_local:
            raise InvalidSource(LOCAL_FOR_STAFF)
        if not settings.OPENGURU_GIT_ALLOW_FILE_URLS:
            raise InvalidSource(FILE_REFUSED)
        url = local
    try:
        registry.repo_reader().check(url, branch=str(options.get("branch") or ""), token=token_for(url, token))
    except BlockedUrlError as exc:
        raise InvalidSource(str(exc)) from exc
    except ServiceError as exc:
        reason = str(exc).removeprefix("git ls-remote failed: ")
        raise InvalidSource(f"This repository cannot be fetched: {reason}") from exc
    return url


def _website(url: str) -> None:
    """Refuse what the SSRF guard will refuse; a name that does not resolve (yet) is left to the run to report."""
    try:
        check_url(url, registry.url_policy())
    except BlockedUrlError as exc:
        raise InvalidSource(str(exc)) from exc
    except ServiceError:
        pass


def check_new_source(*, guru: Guru, kind: str, url: str, options: dict[str, Any], token: str = "",
                     allow_local: bool = False) -> str:
    """The URL to store (a local path as file://). Raises AlreadyASource, or InvalidSource for what would fail.

    Runs the same URL policy as the worker, so a refusal reads exactly as the failed run would have; a Git
    remote is also asked for its refs (git ls-remote, a few seconds at most) with the token the clone will use.
    """
    if kind == SourceKind.GITHUB_REPO and (local := local_repository_url(url)) is not None:
        url = local if allow_local else url
    existing = source_with_url(guru=guru, kind=kind, url=url)
    if existing is not None:
        raise AlreadyASource(f"This is already a source of this guru: {existing}.", source=existing)
    if kind == SourceKind.WEBSITE:
        _website(url)
    elif kind == SourceKind.GITHUB_REPO:
        url = _repository(url, options, token, allow_local)
    return url


def overlap_warning(*, guru: Guru, source: DataSource) -> str:
    """For a single page a sitemap or crawl of the guru already indexed: a sentence saying so, else ""."""
    if source.kind != SourceKind.WEBSITE or (source.options or {}).get("mode", "page") != "page":
        return ""
    covering = source_covering_url(guru=guru, url=source.url)
    if covering is None or covering.pk == source.pk:
        return ""
    return f"This page is already indexed as part of {covering}; it was added again as a page of its own."
