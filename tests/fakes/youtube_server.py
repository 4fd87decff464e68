"""A fake YouTube speaking the wire protocol youtube-transcript-api and our adapter use, and a session routed to it."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit
from xml.sax.saxutils import escape as xml_escape

import pytest
import requests
from requests.adapters import HTTPAdapter

from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from tests.contracts import TEST_TIMEOUT
from tests.fakes.http import FakeRequest, FakeResponder, serve

FAKE_INNERTUBE_API_KEY = "AIzaSyFakeOpenGuruInnertubeKey_0123456"
YOUTUBE_HOSTS = frozenset({"www.youtube.com", "youtube.com", "m.youtube.com"})
# Put on playlist pages outside ytInitialData, where a careless scraper would pick it up first.
DECOY_VIDEO_ID = "DecoyVideo0"
BOT_CHECK_REASON = "Sign in to confirm you\u2019re not a bot"
MEMBERS_ONLY_REASON = ("Join this channel to get access to members-only content like this video, "
                       "and other exclusive perks.")

VideoState = Literal[
    "ok",  # playable; captions as configured (none at all: the player response has no captions block)
    "private",  # player: LOGIN_REQUIRED "This video is private"; oEmbed 401
    "unavailable",  # player: ERROR "This video is unavailable" (also any id never added); oEmbed 404
    "age_restricted",  # player: LOGIN_REQUIRED "This video may be inappropriate for some users."
    "members_only",  # player: UNPLAYABLE with the members-only reason
    "no_captions",  # playable, but no captions block even if tracks were added
    "bot_check",  # player: LOGIN_REQUIRED "Sign in to confirm you're not a bot"
    "rate_limited",  # watch page: HTTP 429 with the reCAPTCHA page
    "recaptcha",  # watch page: HTTP 200 reCAPTCHA page without INNERTUBE_API_KEY
    "captions_rate_limited",  # timedtext: HTTP 429
    "captions_forbidden",  # timedtext: HTTP 403
    "player_error",  # innertube player: HTTP 503
    "consent",  # watch page: the EU consent form until the CONSENT cookie is sent
    "po_token",  # caption URLs carry &exp=xpe (YouTube wants a PO token)
]
PlaylistState = Literal["ok", "private", "rate_limited"]
_UNPLAYABLE: dict[str, tuple[str, str]] = {
    "private": ("LOGIN_REQUIRED", "This video is private"),
    "age_restricted": ("LOGIN_REQUIRED", "This video may be inappropriate for some users."),
    "bot_check": ("LOGIN_REQUIRED", BOT_CHECK_REASON),
    "members_only": ("UNPLAYABLE", MEMBERS_ONLY_REASON),
    "unavailable": ("ERROR", "This video is unavailable"),
}
_LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "nl": "Dutch"}
_RECAPTCHA_PAGE = """<!DOCTYPE html><html><head><title>YouTube</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head>
<body><div id="captcha-page"><p>Our systems have detected unusual traffic from your computer network.</p>
<form action="/das_captcha?fw=1" method="POST"><div class="g-recaptcha" data-sitekey="6LfFakeSiteKey"></div>
<input type="hidden" name="action_recaptcha_verify2" value="1"><input type="submit" value="Submit"></form>
</div></body></html>"""


@dataclass
class FakeTrack:
    """One caption track; `raw` cues are the caption's HTML source (tags, entities) instead of plain text."""

    language: str
    cues: tuple[tuple[float, str], ...]
    generated: bool = False
    name: str = ""
    raw: bool = False

    @property
    def display_name(self) -> str:
        language = self.name or _LANGUAGE_NAMES.get(self.language, self.language)
        return f"{language} (auto-generated)" if self.generated and not self.name else language


@dataclass
class FakeVideo:
    video_id: str
    title: str
    state: VideoState = "ok"
    author: str = "OpenGuru Test Channel"
    tracks: list[FakeTrack] = field(default_factory=list)
    oembed_status: int | None = None
    """Force this HTTP status (with a plain-text body) from oEmbed."""


@dataclass
class FakePlaylist:
    playlist_id: str
    video_ids: list[str]
    title: str
    state: PlaylistState = "ok"
    escaped: bool = False
    """Serve ytInitialData as a \\x22-escaped JavaScript string, as some page variants do."""


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
                     state: PlaylistState = "ok", escaped: bool = False) -> FakePlaylist:
        playlist = FakePlaylist(playlist_id, list(video_ids), title, state, escaped)
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
            reply.body(429, _RECAPTCHA_PAGE)
        elif state == "recaptcha":
            reply.body(200, _RECAPTCHA_PAGE)
        elif state == "consent" and "CONSENT=YES+" not in request.headers.get("cookie", ""):
            reply.body(200, _consent_page(video_id))
        else:
            reply.body(200, _watch_page(video_id, video.title if video else "YouTube"))

    def _player(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        body = request.json()
        client = body.get("context", {}).get("client", {})
        if query.get("key") != FAKE_INNERTUBE_API_KEY:
            reply.json(_google_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"), 400)
        elif not client.get("clientName") or not client.get("clientVersion") or not body.get("videoId"):
            reply.json(_google_error(400, "Request contains an invalid argument.", "INVALID_ARGUMENT"), 400)
        elif (video := self.videos.get(body["videoId"])) is not None and video.state == "player_error":
            reply.json(_google_error(503, "The service is currently unavailable.", "UNAVAILABLE"), 503)
        else:
            reply.json(self._player_response(body["videoId"], video))

    def _player_response(self, video_id: str, video: FakeVideo | None) -> dict[str, Any]:
        state = video.state if video else "unavailable"
        if state in _UNPLAYABLE or video is None:
            status, reason = _UNPLAYABLE[state]
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
            tracks = [_caption_track(video_id, track, po_token=state == "po_token") for track in video.tracks]
            languages = [{"languageCode": code, "languageName": {"runs": [{"text": name}]}}
                         for code, name in _LANGUAGE_NAMES.items()]
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
            reply.body(429, _RECAPTCHA_PAGE)
        elif video.state == "captions_forbidden":
            reply.body(403, "<html><body>403 Forbidden</body></html>")
        elif "xpe" in query.get("exp", ""):
            reply.body(200, "", "text/xml; charset=UTF-8")  # what YouTube sends when a PO token is missing
        elif query.get("fmt") == "srv3":
            reply.body(200, _srv3_xml(track), "text/xml; charset=UTF-8")
        else:
            reply.body(200, _timedtext_xml(track), "text/xml; charset=UTF-8")

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
            reply.json(_oembed_payload(video))

    def _playlist(self, request: FakeRequest, query: dict[str, str], reply: _Reply) -> None:
        playlist = self.playlists.get(query.get("list", ""))
        if playlist is not None and playlist.state == "rate_limited":
            reply.body(429, _RECAPTCHA_PAGE)
            return
        reply.body(200, _playlist_page(_playlist_data(playlist), escaped=bool(playlist and playlist.escaped)))


def _google_error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "errors": [{"message": message, "reason": "badRequest"}],
                      "status": status}}


def _watch_page(video_id: str, title: str) -> str:
    config = {"INNERTUBE_API_KEY": FAKE_INNERTUBE_API_KEY, "INNERTUBE_CLIENT_NAME": "WEB",
              "INNERTUBE_CLIENT_VERSION": "2.20250101.00.00", "VISITOR_DATA": "CgtGYWtlVmlzaXRvcg%3D%3D"}
    player = {"videoDetails": {"videoId": video_id, "title": title}}
    return (f'<!DOCTYPE html><html lang="en"><head><title>{html.escape(title)} - YouTube</title>'
            f'<script nonce="fake">ytcfg.set({_script_json(config)});</script></head><body><div id="player"></div>'
            f'<script nonce="fake">var ytInitialPlayerResponse = {_script_json(player)};</script></body></html>')


def _consent_page(video_id: str) -> str:
    return ('<!DOCTYPE html><html><body><p>Before you continue to YouTube</p>'
            '<form action="https://consent.youtube.com/s" method="POST">'
            f'<input type="hidden" name="continue" value="https://www.youtube.com/watch?v={video_id}">'
            '<input type="hidden" name="v" value="cb.20210328-17-p0.de+FX+119">'
            '<button type="submit">Accept all</button></form></body></html>')


def _caption_track(video_id: str, track: FakeTrack, *, po_token: bool) -> dict[str, Any]:
    params = {"v": video_id, "ei": "FakeEventId", "caps": "asr", "opi": "112496729", "xoaf": "5", "hl": "en",
              "ip": "0.0.0.0", "ipbits": "0", "expire": "1999999999", "sparams": "ip,ipbits,expire,v,ei,caps,opi,xoaf",
              "signature": "FAKE0SIGNATURE.FAKE1SIGNATURE", "key": "yt8"}
    if po_token:
        params["exp"] = "xpe"
    if track.generated:
        params["kind"] = "asr"
    params["lang"] = track.language
    caption: dict[str, Any] = {
        "baseUrl": f"https://www.youtube.com/api/timedtext?{urlencode(params, safe=',')}&fmt=srv3",
        "name": {"runs": [{"text": track.display_name}]},
        "vssId": f"{'a' if track.generated else ''}.{track.language}",
        "languageCode": track.language,
        "isTranslatable": True,
        "trackName": "",
    }
    if track.generated:
        caption["kind"] = "asr"
    return caption


def _cue_html(track: FakeTrack, text: str) -> str:
    # YouTube stores captions as HTML (&#39; for apostrophes) and then XML-escapes that into the timedtext file.
    return text if track.raw else html.escape(text).replace("&#x27;", "&#39;")


def _durations(cues: tuple[tuple[float, str], ...]) -> list[float]:
    starts = [start for start, _ in cues]
    ends = [*starts[1:], starts[-1] + 2.0] if starts else []
    return [max(end - start, 0.01) for start, end in zip(starts, ends, strict=True)]


def _timedtext_xml(track: FakeTrack) -> str:
    lines = [f'<text start="{start:g}" dur="{duration:.3f}">{xml_escape(_cue_html(track, text))}</text>'
             for (start, text), duration in zip(track.cues, _durations(track.cues), strict=True)]
    return '<?xml version="1.0" encoding="utf-8" ?><transcript>' + "".join(lines) + "</transcript>"


def _srv3_xml(track: FakeTrack) -> str:
    lines = [f'<p t="{int(start * 1000)}" d="{int(duration * 1000)}">{xml_escape(_cue_html(track, text))}</p>'
             for (start, text), duration in zip(track.cues, _durations(track.cues), strict=True)]
    body = "".join(lines)
    return f'<?xml version="1.0" encoding="utf-8" ?><timedtext format="3"><body>{body}</body></timedtext>'


def _oembed_payload(video: FakeVideo) -> dict[str, Any]:
    return {
        "title": video.title, "author_name": video.author, "author_url": "https://www.youtube.com/@openguru-test",
        "type": "video", "height": 113, "width": 200, "version": "1.0", "provider_name": "YouTube",
        "provider_url": "https://www.youtube.com/", "thumbnail_height": 360, "thumbnail_width": 480,
        "thumbnail_url": f"https://i.ytimg.com/vi/{video.video_id}/hqdefault.jpg",
        "html": f'<iframe width="200" height="113" src="https://www.youtube.com/embed/{video.video_id}?feature=oembed"'
                ' frameborder="0" allowfullscreen></iframe>',
    }


def _playlist_data(playlist: FakePlaylist | None) -> dict[str, Any]:
    if playlist is None or playlist.state == "private":
        message = "The playlist does not exist." if playlist is None else "This playlist is private."
        return {"responseContext": {}, "alerts": [{"alertWithButtonRenderer": {
            "type": "ERROR", "text": {"simpleText": message}}}]}
    pid = playlist.playlist_id
    items = [{"playlistVideoRenderer": {
        "videoId": video_id, "index": {"simpleText": str(index + 1)}, "isPlayable": True,
        "thumbnail": {"thumbnails": [{"url": f"https://i.ytimg.com/vi/{video_id}/hqdefault.jpg"}]},
        "title": {"runs": [{"text": f"Video {index + 1}"}]},
        "navigationEndpoint": {"watchEndpoint": {"videoId": video_id, "playlistId": pid, "index": index}},
    }} for index, video_id in enumerate(playlist.video_ids)]
    list_renderer = {"playlistVideoListRenderer": {"contents": items, "playlistId": pid, "isEditable": False}}
    tab = {"tabRenderer": {"selected": True, "content": {"sectionListRenderer": {"contents": [
        {"itemSectionRenderer": {"contents": [list_renderer]}}]}}}}
    header: dict[str, Any] = {"playlistId": pid, "title": {"simpleText": playlist.title},
                              "numVideosText": {"runs": [{"text": f"{len(items)} videos"}]}}
    if playlist.video_ids:
        header["playEndpoint"] = {"watchEndpoint": {"videoId": playlist.video_ids[0], "playlistId": pid}}
    return {"responseContext": {}, "contents": {"twoColumnBrowseResultsRenderer": {"tabs": [tab]}},
            "header": {"playlistHeaderRenderer": header},
            "metadata": {"playlistMetadataRenderer": {"title": playlist.title}}}


def _playlist_page(data: dict[str, Any], *, escaped: bool) -> str:
    initial = _script_json(data)
    if escaped:
        hexed = initial.replace("\\", "\\\\").replace('"', "\\x22").replace("{", "\\x7b").replace("}", "\\x7d")
        initial = f"'{hexed}'"
    decoy = _script_json({"watchEndpoint": {"videoId": DECOY_VIDEO_ID}})
    return ('<!DOCTYPE html><html lang="en"><head><title>Playlist - YouTube</title></head><body>'
            f'<script nonce="fake">var ytPreloadedCommand = {decoy};</script>'
            f'<script nonce="fake">var ytInitialData = {initial};</script></body></html>')


def _script_json(payload: Any) -> str:
    # Inside <script>, "</" would end the element early; YouTube escapes it the same way.
    return json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")


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
