"""Typed values of ingestion: extracted documents, chunks to write, and what loaders return."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class ContentType(str, enum.Enum):
    """How a document's text is structured; decides the splitter."""

    PROSE = "prose"
    MARKDOWN = "markdown"
    CODE = "code"


@dataclass(frozen=True)
class Segment:
    """A transcript cue: the character offset in Document.text where it starts, and its time."""

    offset: int
    seconds: float


@dataclass(frozen=True)
class Document:
    """One unit of extracted content: a web page, a video transcript, a PDF page or a repository file.

    `key` identifies the unit inside its source (URL, page number, file path) so a re-sync can
    replace just that unit; `link` is where a citation points.
    """

    key: str
    text: str
    title: str
    link: str
    content_type: ContentType = ContentType.PROSE
    language: str = ""
    """Programming language of CODE documents (e.g. "python"), for language-aware splitting."""
    page: int | None = None
    segments: tuple[Segment, ...] = ()


@dataclass(frozen=True)
class FetchedPage:
    """A web page as a fetcher returns it: markdown without boilerplate, and the links it holds."""

    url: str
    final_url: str
    title: str
    markdown: str
    links: tuple[str, ...] = ()


@dataclass(frozen=True)
class Transcript:
    """A video's captions as (start seconds, text) cues."""

    video_id: str
    title: str
    language: str
    cues: tuple[tuple[float, str], ...]


@dataclass(frozen=True)
class RepoFile:
    """A file of a repository snapshot, identified by its git blob sha."""

    path: str
    blob_sha: str
    size: int


@dataclass(frozen=True)
class RepoSnapshot:
    """A checked-out repository: where it is on disk, which commit, and the files worth indexing."""

    workdir: str
    default_branch: str
    commit: str
    web_url: str
    files: tuple[RepoFile, ...] = field(default=())
    skipped: tuple[tuple[str, str], ...] = field(default=())
    """(path, reason) for files left out: too large, binary, excluded by a glob."""


@dataclass(frozen=True)
class PlaylistVideos:
    """A playlist's video ids in order without repeats, and why the list stops early ("" when it is complete).

    `truncation` is a sentence for the maintainer (the configured limit was reached, YouTube refused to list
    the rest...); the videos in `video_ids` are still worth indexing.
    """

    video_ids: tuple[str, ...]
    truncation: str = ""
