"""Recognise YouTube video and playlist links, and build timestamped watch links for citations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, quote, urlsplit

_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]{11}")
_PLAYLIST_ID = re.compile(r"[A-Za-z0-9_-]{2,64}")
_YOUTUBE_HOSTS = frozenset({
    "youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com",
    "youtube-nocookie.com", "www.youtube-nocookie.com",
})
_SHORT_HOSTS = frozenset({"youtu.be", "www.youtu.be"})
# Path prefixes followed by a video id: /shorts/ID, /embed/ID, /live/ID and the old Flash /v/ID.
_VIDEO_PATHS = frozenset({"shorts", "embed", "live", "v"})
_CHANNEL_PATHS = frozenset({"channel", "c", "user"})
# Lists that exist only for the signed-in viewer (Watch later, Liked videos) can never be read by a server.
_PERSONAL_LISTS = frozenset({"WL", "LL"})


@dataclass(frozen=True)
class YouTubeRef:
    """What a YouTube link points at: one video or a whole playlist."""

    kind: Literal["video", "playlist"]
    id: str


def is_video_id(value: str) -> bool:
    """True for an 11-character YouTube video id."""
    return _VIDEO_ID.fullmatch(value) is not None


def is_playlist_id(value: str) -> bool:
    """True for something shaped like a playlist id (PL…, UU…, OLAK5uy_…)."""
    return _PLAYLIST_ID.fullmatch(value) is not None


def parse_youtube_url(url: str) -> YouTubeRef:
    """The video or playlist a link points at; a watch link inside a playlist counts as the video.

    Raises ValueError with a message fit for the person who pasted the link.
    """
    text = url.strip()
    if not text:
        raise ValueError("Paste a YouTube video or playlist link.")
    if "://" not in text:
        text = f"https://{text}"
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if parts.scheme.lower() not in ("http", "https") or not (host in _YOUTUBE_HOSTS or host in _SHORT_HOSTS):
        raise ValueError(f"{url!r} is not a YouTube link (expected youtube.com or youtu.be).")
    segments = [segment for segment in parts.path.split("/") if segment]
    query = parse_qs(parts.query)
    if host in _SHORT_HOSTS:
        return _video(segments[0] if segments else "", url)
    return _parse_youtube_path(segments, query, url)


def _parse_youtube_path(segments: list[str], query: dict[str, list[str]], url: str) -> YouTubeRef:
    first = segments[0].lower() if segments else ""
    video_id = query.get("v", [""])[0]
    list_id = query.get("list", [""])[0]
    if first == "watch":
        if video_id:
            return _video(video_id, url)
        if list_id:
            return _playlist(list_id, url)
        raise ValueError(f"{url!r} has no video id (the v= parameter is missing).")
    if first == "playlist":
        return _playlist(list_id, url)
    if first in _VIDEO_PATHS:
        return _video(segments[1] if len(segments) > 1 else "", url)
    if first.startswith("@") or first in _CHANNEL_PATHS:
        raise ValueError(f"{url!r} is a channel link; paste a link to one of its videos or playlists instead.")
    raise ValueError(f"{url!r} is not a YouTube video or playlist link.")


def _video(video_id: str, url: str) -> YouTubeRef:
    if not is_video_id(video_id):
        raise ValueError(f"{url!r} does not contain a valid YouTube video id (11 letters, digits, '-' or '_').")
    return YouTubeRef(kind="video", id=video_id)


def _playlist(list_id: str, url: str) -> YouTubeRef:
    if not is_playlist_id(list_id):
        raise ValueError(f"{url!r} does not contain a valid YouTube playlist id (the list= parameter).")
    if list_id in _PERSONAL_LISTS:
        raise ValueError(f"{url!r} is a personal list (Watch later / Liked videos) that only its owner can see.")
    if list_id.startswith("RD"):
        # Mixes are generated per viewer and YouTube has no playlist page for them.
        raise ValueError(f"{url!r} is a YouTube Mix, which cannot be listed; link a regular playlist instead.")
    return YouTubeRef(kind="playlist", id=list_id)


def video_link(video_id: str, seconds: float | None = None) -> str:
    """The watch URL, starting at `seconds` (whole seconds) when given."""
    link = f"https://www.youtube.com/watch?v={quote(video_id, safe='')}"
    if seconds is None:
        return link
    return f"{link}&t={max(int(seconds), 0)}s"
