"""A fake YouTube speaking the wire protocol youtube-transcript-api and our adapter use, and a session routed to it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import pytest
import requests
from requests.adapters import HTTPAdapter

from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from tests.contracts import TEST_TIMEOUT
from tests.fakes.http import FakeRequest, FakeResponder, serve
from tests.fakes.youtube_innertube import browse_response, playlist_page, token_position
from tests.fakes.youtube_pages import (  # noqa: F401 - DECOY_VIDEO_ID is re-exported for the tests
    DECOY_VIDEO_ID,
    FAKE_INNERTUBE_API_KEY,
    LANGUAGE_NAMES,
    RECAPTCHA_PAGE,
    UNPLAYABLE,
    YOUTUBE_HOSTS,
    BrowseState,
    FakePlaylist,
    FakeTrack,
    FakeVideo,
    PlaylistLayout,
    PlaylistState,
    VideoState,
    caption_track,
    consent_page,
    google_error,
    oembed_payload,
    srv3_xml,
    timedtext_xml,
    watch_page,
)

_BROWSE_FAILURES: dict[str, tuple[int, str, str]] = {
    "unavailable": (503, "The service is currently unavailable.", "UNAVAILABLE"),
    "rate_limited": (429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED"),
    "refused": (403, "The caller does not have permission", "PERMISSION_DENIED"),
}


@dataclass(frozen=True)
class SentRequest:
    """A request a fake session routed: the URL as the client built it and the timeout requests passed down."""

    method: str
    url: str
    timeout: Any


class _Reply:
    """Writes any status with an HTML, XML or JSON body (FakeResponder itself only writes JSON or streams)."""

    def __init__(self, responder: FakeResponder) -> None:
        self._responder = responder

    def json(self, payload: Any, status: int = 200) -> None:
        self._responder.json(payload, status)

    def body(self, status: int, text: str, content_type: str = "text/html; charset=utf-8") -> None:
        self._responder.raw(text.encode(), status=status, headers={"Content-Type": content_type})


@dataclass
class YouTubeFake:
    """The fake's state: videos and playlists to serve, stalls to apply, and every request sessions routed to it."""

    base_url: str = ""
    videos: dict[str, FakeVideo] = field(default_factory=dict)
    playlists: dict[str, FakePlaylist] = field(default_factory=dict)
    sent: list[SentRequest] = field(default_factory=list)
    stalls: dict[str, float] = field(default_factory=dict)
    _release: threading.Event = field(default_factory=threading.Event)

    def add_video(self, video_id: str, *, title: str = "A fake video", cues: Sequence[tuple[float, str]] = (),
                  language: str = "en", generated: bool = False, state: VideoState = "ok") -> FakeVideo:
        """A video, with one caption track when `cues` are given."""
        video = FakeVideo(video_id=video_id, title=title, state=state)
        self.videos[video_id] = video
        if cues:
            self.add_track(video_id, language=language, cues=cues, generated=generated)
        return video

    def add_track(self, video_id: str, *, language: str, cues: Sequence[tuple[float, str]], generated: bool = False,
                  name: str = "", raw: bool = False) -> FakeTrack:
        track = FakeTrack(language=language, cues=tuple(cues), generated=generated, name=name, raw=raw)
        self.videos[video_id].tracks.append(track)
        return track

    def add_playlist(self, playlist_id: str, video_ids: Sequence[str], *, title: str = "A fake playlist",
                     state: PlaylistState = "ok", escaped: bool = False, page_size: int = 100,
                     layout: PlaylistLayout = "innertube", browse: BrowseState = "ok") -> FakePlaylist:
        """A playlist served 100 videos per page (`page_size`), the rest through POST /youtubei/v1/browse."""
        playlist = FakePlaylist(playlist_id, list(video_ids), title, state, escaped, page_size, layout, browse)
        self.playlists[playlist_id] = playlist
        return playlist

    def stall(self, path: str, seconds: float = 30.0) -> None:
        """Requests to `path` (e.g. "/api/timedtext") wait this long, or until teardown, before answering."""
        self.stalls[path] = seconds

    def release(self) -> None:
        self._release.set()

    def session(self) -> YouTubeFakeSession:
        """A session whose YouTube requests reach this fake; it refuses every other host."""
        return YouTubeFakeSession(self.base_url, self.sent)

    def paths(self) -> list[str]:
        """`METHOD path` of every routed request, without the query."""
        return [f"{sent.method} {urlsplit(sent.url).path}" for sent in self.sent]

    def route(self, request: FakeRequest, responder: FakeResponder) -> None:
        try:
            self._dispatch(request, _Reply(responder))
        except (BrokenPipeError, ConnectionResetError):
            return  # the client timed out while we were stalling

    def _dispatch(self, request: FakeRequest, reply: _Reply) -> None:
        parts = urlsplit(request.path)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        if parts.path in self.stalls:
            self._release.wait(self.stalls[parts.path])
        handlers: dict[tuple[str, str], Callable[[FakeRequest, dict[str, str], _Reply], None]] = {
            ("GET", "/watch"): self._watch,
            ("POST", "/youtubei/v1/player"): self._player,
            ("GET", "/api/timedtext"): self._timedtext,
            ("GET", "/oembed"): self._oembed,
            ("GET", "/playlist"): self._playlist,
            ("POST", "/youtubei/v1/browse"): self._browse,
        }
        handler = handlers.get((request.method, parts.path))
        if handler is None:
            reply.body(404, "<html><body>404 Not Found</body></html>")
            return
        handler(request, query, reply)

    def _watch(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        video_id = query.get("v", "")
        video = self.videos.get(video_id)
        state = video.state if video else "unavailable"
        if state == "rate_limited":
            reply.body(429, RECAPTCHA_PAGE)
        elif state == "recaptcha":
            reply.body(200, RECAPTCHA_PAGE)
        elif state == "consent" and "CONSENT=YES+" not in request.headers.get("cookie", ""):
            reply.body(200, consent_page(video_id))
        else:
            reply.body(200, watch_page(video_id, video.title if video else "YouTube"))

    def _player(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        body = request.json()
        client = body.get("context", {}).get("client", {})
        if query.get("key") != FAKE_INNERTUBE_API_KEY:
            reply.json(google_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"), 400)
        elif not client.get("clientName") or not client.get("clientVersion") or not body.get("videoId"):
            reply.json(google_error(400, "Request contains an invalid argument.", "INVALID_ARGUMENT"), 400)
        elif (video := self.videos.get(body["videoId"])) is not None and video.state == "player_error":
            reply.json(google_error(503, "The service is currently unavailable.", "UNAVAILABLE"), 503)
        else:
            reply.json(self._player_response(body["videoId"], video))

    def _player_response(self, video_id: str, video: FakeVideo | None) -> dict[str, Any]:
        state = video.state if video else "unavailable"
        if state in UNPLAYABLE or video is None:
            status, reason = UNPLAYABLE[state]
            error_screen = {"playerErrorMessageRenderer": {"reason": {"runs": [{"text": reason}]}}}
            return {"responseContext": {}, "playabilityStatus": {"status": status, "reason": reason,
                                                                 "errorScreen": error_screen}}
        response: dict[str, Any] = {
            "responseContext": {},
            "playabilityStatus": {"status": "OK", "playableInEmbed": True},
            "videoDetails": {"videoId": video_id, "title": video.title, "author": video.author,
                             "lengthSeconds": "600", "isPrivate": False},
        }
        if state != "no_captions" and video.tracks:
            tracks = [caption_track(video_id, track, po_token=state == "po_token") for track in video.tracks]
            languages = [{"languageCode": code, "languageName": {"runs": [{"text": name}]}}
                         for code, name in LANGUAGE_NAMES.items()]
            response["captions"] = {"playerCaptionsTracklistRenderer": {
                "captionTracks": tracks, "audioTracks": [{"captionTrackIndices": list(range(len(tracks)))}],
                "translationLanguages": languages, "defaultAudioTrackIndex": 0}}
        return response

    def _timedtext(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        video = self.videos.get(query.get("v", ""))
        generated = query.get("kind") == "asr"
        track = next((t for t in video.tracks if t.language == query.get("lang") and t.generated == generated),
                     None) if video else None
        if video is None or track is None:
            reply.body(404, "")
        elif video.state == "captions_rate_limited":
            reply.body(429, RECAPTCHA_PAGE)
        elif video.state == "captions_forbidden":
            reply.body(403, "<html><body>403 Forbidden</body></html>")
        elif "xpe" in query.get("exp", ""):
            reply.body(200, "", "text/xml; charset=UTF-8")  # what YouTube sends when a PO token is missing
        elif query.get("fmt") == "srv3":
            reply.body(200, srv3_xml(track), "text/xml; charset=UTF-8")
        else:
            reply.body(200, timedtext_xml(track), "text/xml; charset=UTF-8")

    def _oembed(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        target = parse_qs(urlsplit(query.get("url", "")).query).get("v", [""])[0]
        video = self.videos.get(target)
        if query.get("format") != "json":
            reply.body(501, "Not Implemented", "text/plain")
        elif video is not None and video.oembed_status is not None:
            reply.body(video.oembed_status, "Error", "text/plain")
        elif video is None or video.state == "unavailable":
            reply.body(404, "Not Found", "text/plain")
        elif video.state in ("private", "members_only"):
            reply.body(401, "Unauthorized", "text/plain")
        else:
            reply.json(oembed_payload(video))

    def _playlist(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        playlist = self.playlists.get(query.get("list", ""))
        if playlist is not None and playlist.state == "rate_limited":
            reply.body(429, RECAPTCHA_PAGE)
            return
        reply.body(200, playlist_page(playlist))

    def _browse(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        body = request.json()
        client = body.get("context", {}).get("client", {})
        position = token_position(str(body.get("continuation", "")))
        playlist = self.playlists.get(position[0]) if position else None
        if query.get("key") != FAKE_INNERTUBE_API_KEY:
            reply.json(google_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"), 400)
        elif (not client.get("clientName") or not client.get("clientVersion") or playlist is None or position is None
              or not 0 < position[1] < len(playlist.video_ids)):
            reply.json(google_error(400, "Request contains an invalid argument.", "INVALID_ARGUMENT"), 400)
        elif playlist.browse == "garbage":
            reply.body(200, "<html><body>Something went wrong</body></html>")
        elif playlist.browse in _BROWSE_FAILURES:
            status, message, code = _BROWSE_FAILURES[playlist.browse]
            reply.json(google_error(status, message, code), status)
        else:
            reply.json(browse_response(playlist, position[1]))


class RedirectToFake(HTTPAdapter):
    """Sends YouTube requests to the fake (same path and query, original URL kept for cookies); refuses other hosts."""

    def __init__(self, base_url: str, log: list[SentRequest]) -> None:
        super().__init__()
        self._base = urlsplit(base_url)
        self._log = log

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        url = request.url or ""
        parts = urlsplit(url)
        if parts.hostname not in YOUTUBE_HOSTS:
            raise requests.ConnectionError(f"The fake YouTube session refuses {url}: tests never touch the internet.")
        self._log.append(SentRequest(request.method or "", url, timeout))
        routed = request.copy()
        routed.url = urlunsplit((self._base.scheme, self._base.netloc, parts.path, parts.query, ""))
        # No proxies: they were chosen for the YouTube URL, and a proxy must never see the local fake.
        return super().send(routed, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=None)


class YouTubeFakeSession(requests.Session):
    """A requests.Session whose every request goes to the fake YouTube, so vendor code runs unchanged."""

    def __init__(self, base_url: str, log: list[SentRequest]) -> None:
        super().__init__()
        self.trust_env = False  # environment proxies and .netrc must not apply to the fake
        router = RedirectToFake(base_url, log)
        self.mount("https://", router)
        self.mount("http://", router)


@pytest.fixture
def youtube_fake() -> Iterator[YouTubeFake]:
    """A running fake YouTube with no videos; add them with add_video / add_track / add_playlist."""
    fake = YouTubeFake()
    with serve(fake.route) as url:
        fake.base_url = url
        try:
            yield fake
        finally:
            fake.release()


@pytest.fixture
def youtube_fetcher(youtube_fake: YouTubeFake) -> YouTubeTranscriptFetcher:
    """The production fetcher over a session routed to the fake."""
    return YouTubeTranscriptFetcher(http_session=youtube_fake.session(), timeout=TEST_TIMEOUT)
