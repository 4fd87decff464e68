"""YouTube captions (through youtube-transcript-api) and playlist expansion, behind the TranscriptFetcher port."""

# LangChain's YoutubeLoader is not used: it builds `YouTubeTranscriptApi()` itself, so no requests.Session (fake
# server in tests, proxies, timeouts) can be injected, and it turns "captions disabled" into an empty document list
# instead of an error a maintainer can act on. The library is used directly instead.

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any
from xml.etree.ElementTree import ParseError

import requests
from requests.adapters import BaseAdapter
from youtube_transcript_api import (
    AgeRestricted,
    CouldNotRetrieveTranscript,
    FailedToCreateConsentCookie,
    FetchedTranscriptSnippet,
    InvalidVideoId,
    NoTranscriptFound,
    PoTokenRequired,
    RequestBlocked,
    TranscriptsDisabled,
    VideoUnavailable,
    VideoUnplayable,
    YouTubeDataUnparsable,
    YouTubeRequestFailed,
    YouTubeTranscriptApi,
)
from youtube_transcript_api import Transcript as CaptionTrack

from backend.adapters.youtube.playlist import (
    BROWSE_URL,
    BrowseClient,
    PlaylistBatch,
    browse_client,
    continuation_batch,
    first_batch,
)
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError
from backend.pipeline.ingest_types import PlaylistVideos, Transcript
from backend.pipeline.youtube_urls import is_playlist_id, is_video_id, video_link

logger = logging.getLogger(__name__)

OEMBED_URL = "https://www.youtube.com/oembed"
PLAYLIST_URL = "https://www.youtube.com/playlist"
NO_CAPTIONS = "This video has no captions, so it cannot be indexed."
PRIVATE_OR_UNAVAILABLE = "This video is private or unavailable (deleted, or the link is wrong)."
BLOCKED = ("YouTube is rate-limiting or blocking requests from this server's IP address; try again later "
           "(servers in cloud data centres are often blocked for good and need a proxy).")
_LIBRARY_OUTDATED = ("YouTube changed how it serves captions and the installed youtube-transcript-api cannot read "
                     "them; updating that library usually fixes this.")
_CONSENT = "YouTube showed a cookie-consent page instead of the content (this happens for some EU server locations)."
_CONSENT_FORM = 'action="https://consent.youtube.com/s"'
_RECAPTCHA = 'class="g-recaptcha"'
DEFAULT_PLAYLIST_MAX_VIDEOS = 1000
# YouTube sends a playlist 100 videos per page or continuation answer.
_PLAYLIST_BATCH = 100
_PERMANENT: tuple[tuple[tuple[type[CouldNotRetrieveTranscript], ...], str], ...] = (
    ((TranscriptsDisabled, NoTranscriptFound), NO_CAPTIONS),
    ((VideoUnavailable, InvalidVideoId), PRIVATE_OR_UNAVAILABLE),
    ((AgeRestricted,), "This video is age-restricted; YouTube only shows its captions to signed-in viewers, "
                       "so it cannot be indexed."),
    ((PoTokenRequired, YouTubeDataUnparsable), _LIBRARY_OUTDATED),
    ((FailedToCreateConsentCookie,), _CONSENT),
)


class _DefaultTimeout(BaseAdapter):
    """Gives requests sent without a timeout one, then hands them to the wrapped transport adapter.

    youtube-transcript-api calls session.get/post without a timeout and requests has no session-wide default,
    so without this a stalled YouTube connection would hang an ingestion worker for good.
    """

    def __init__(self, inner: BaseAdapter, timeout: float) -> None:
        super().__init__()
        self.inner = inner
        self.timeout = timeout

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        return self.inner.send(request, stream=stream, timeout=self.timeout if timeout is None else timeout,
                               verify=verify, cert=cert, proxies=proxies)

    def close(self) -> None:
        self.inner.close()


def _apply_default_timeout(session: requests.Session, timeout: float) -> None:
    for prefix, adapter in list(session.adapters.items()):
        inner = adapter.inner if isinstance(adapter, _DefaultTimeout) else adapter
        session.mount(prefix, _DefaultTimeout(inner, timeout))


class YouTubeTranscriptFetcher:
    """TranscriptFetcher over youtube-transcript-api; raises only Transient/PermanentServiceError.

    The fetcher takes over the session (the library adds headers and a consent cookie to it, and every mounted
    transport adapter gets the default timeout). Like the library, one instance serves one thread.
    """

    def __init__(self, *, http_session: requests.Session | None = None, timeout: float = 20.0,
                 max_playlist_videos: int = DEFAULT_PLAYLIST_MAX_VIDEOS) -> None:
        if max_playlist_videos < 1:
            raise ValueError("max_playlist_videos must be at least 1")
        self._session = http_session if http_session is not None else requests.Session()
        self.timeout = timeout
        self.max_playlist_videos = max_playlist_videos
        # Enough continuation requests for the limit even if YouTube halves its batches, plus the one that finds
        # out whether anything follows the limit; a server that keeps sending tokens cannot hold a worker longer.
        self.max_playlist_requests = 2 * -(-max_playlist_videos // _PLAYLIST_BATCH) + 1
        _apply_default_timeout(self._session, timeout)
        self._api = YouTubeTranscriptApi(http_client=self._session)

    def transcript(self, video_id: str, *, languages: Sequence[str] = ("en",)) -> Transcript:
        """Captions of one video: manual tracks in `languages` first, then generated ones, then any language."""
        if not is_video_id(video_id):
            raise PermanentServiceError(f"{video_id!r} is not a YouTube video id.")
        try:
            track = _choose_track(list(self._api.list(video_id)), languages)
            if track is None:
                raise PermanentServiceError(f"{NO_CAPTIONS} ({video_link(video_id)})")
            fetched = track.fetch()
        except CouldNotRetrieveTranscript as exc:
            raise _service_error(exc, video_id) from exc
        except requests.RequestException as exc:
            raise TransientServiceError(f"Could not reach YouTube for {video_link(video_id)}: {exc}") from exc
        except ParseError as exc:
            # An empty or truncated caption file: seen when YouTube starts protecting captions in a new way.
            raise PermanentServiceError(f"{_LIBRARY_OUTDATED} ({video_link(video_id)})") from exc
        cues = _clean_cues(fetched.snippets)
        if not cues:
            raise PermanentServiceError(f"The captions of this video are empty, so it cannot be indexed. "
                                        f"({video_link(video_id)})")
        return Transcript(video_id=video_id, title=self._title(video_id), language=track.language_code, cues=cues)

    def playlist(self, playlist_id: str) -> PlaylistVideos:
        """Video ids of the playlist, in order, without repeats, following YouTube's continuations.

        At most `max_playlist_videos` are taken; when the list stops early for any reason, `truncation` says why
        and a warning is logged, so no video is dropped silently.
        """
        if not is_playlist_id(playlist_id):
            raise PermanentServiceError(f"{playlist_id!r} is not a YouTube playlist id.")
        page = self._send("GET", PLAYLIST_URL, params={"list": playlist_id}, what="playlist page").text
        if _RECAPTCHA in page:
            raise TransientServiceError(BLOCKED)
        if _CONSENT_FORM in page:
            raise PermanentServiceError(_CONSENT)
        batch = first_batch(page)
        ids = dict.fromkeys(batch.video_ids)
        if not ids:
            raise PermanentServiceError(f"The YouTube playlist {playlist_id} is private, empty or does not exist.")
        stopped = self._continue(batch, browse_client(page), ids)
        limit = self.max_playlist_videos
        if len(ids) > limit:
            stopped = f"the playlist has more than {limit} videos, the limit set by OPENGURU_PLAYLIST_MAX_VIDEOS"
        video_ids = tuple(ids)[:limit]
        if not stopped:
            return PlaylistVideos(video_ids=video_ids)
        truncation = f"Only the first {len(video_ids)} videos of the playlist were taken: {stopped}."
        logger.warning("YouTube playlist %s: %s", playlist_id, truncation)
        return PlaylistVideos(video_ids=video_ids, truncation=truncation)

    def playlist_video_ids(self, playlist_id: str) -> list[str]:
        """`playlist(playlist_id).video_ids` as a list (a truncation is logged, not returned)."""
        return list(self.playlist(playlist_id).video_ids)

    def _continue(self, batch: PlaylistBatch, client: BrowseClient | None, ids: dict[str, None]) -> str:
        """Adds the videos of the following batches to `ids` until the playlist ends or passes the limit.

        Returns why it stopped before the end of the playlist ("" when it did not).
        """
        if batch.more_unread:
            return "the playlist page has a layout this version cannot follow past its first videos"
        requests_left = self.max_playlist_requests
        while batch.continuation and len(ids) <= self.max_playlist_videos:
            if client is None:
                return "the playlist page lacks the client settings (ytcfg) needed to ask for the rest"
            if requests_left == 0:
                return f"YouTube still announced more after {self.max_playlist_requests} requests for the rest"
            requests_left -= 1
            try:
                batch = self._browse(client, batch.continuation)
            except PermanentServiceError as exc:
                # A refused continuation (HTTP 4xx) would be refused again on a retry, while the videos listed so
                # far are still worth indexing; the truncation tells the maintainer what is missing and why.
                return str(exc).rstrip(".")
            if not batch.video_ids and not batch.continuation:
                return "YouTube's answer for the rest of the playlist held no videos"
            ids.update(dict.fromkeys(batch.video_ids))
        return ""

    def _browse(self, client: BrowseClient, token: str) -> PlaylistBatch:
        """The next batch of a playlist from InnerTube's browse endpoint, as YouTube's own web client asks for it.

        Network errors, 429 and 5xx raise TransientServiceError like on the first page: the task retries and the
        whole playlist is listed again, instead of indexing a silently shortened playlist.
        """
        response = self._send("POST", BROWSE_URL, params=client.params(), body=client.body(token),
                              what="rest of the playlist")
        try:
            payload = response.json()
        except ValueError as exc:
            # A 200 whose body is not JSON is a cut-off or garbled answer (a dropped connection, a proxy's page),
            # not a decision by YouTube, so trying again later is the remedy.
            raise TransientServiceError("YouTube sent an unreadable answer for the rest of the playlist; "
                                        "try again later.") from exc
        return continuation_batch(payload)

    def _title(self, video_id: str) -> str:
        """The video's title from oEmbed; a failure here only costs the title, never the transcript."""
        fallback = f"YouTube video {video_id}"
        try:
            params = {"url": video_link(video_id), "format": "json"}
            payload = self._send("GET", OEMBED_URL, params=params, what="oEmbed").json()
        except (ServiceError, ValueError) as exc:
            logger.info("No title for YouTube video %s: %s", video_id, exc)
            return fallback
        title = payload.get("title") if isinstance(payload, dict) else None
        return " ".join(title.split()) if isinstance(title, str) and title.strip() else fallback

    def _send(self, method: str, url: str, *, params: dict[str, str], what: str,
              body: dict[str, Any] | None = None) -> requests.Response:
        try:
            response = self._session.request(method, url, params=params, json=body)
        except requests.RequestException as exc:
            raise TransientServiceError(f"Could not reach YouTube ({what}): {exc}") from exc
        status = response.status_code
        if status == 429 or status >= 500:
            raise TransientServiceError(f"YouTube answered HTTP {status} for the {what}; try again later.")
        if status >= 400:
            raise PermanentServiceError(f"YouTube refused the {what} with HTTP {status}.")
        return response


def _choose_track(tracks: Sequence[CaptionTrack], languages: Sequence[str]) -> CaptionTrack | None:
    """Manual captions in a requested language, then generated ones, then any track (manual first)."""
    if not tracks:
        return None
    wanted = [code.lower() for code in languages]

    def rank(item: tuple[int, CaptionTrack]) -> tuple[int, int, int, int, int]:
        position, track = item
        match = _language_match(track.language_code.lower(), wanted)
        if match is None:
            return (1, int(track.is_generated), 0, 0, position)
        index, inexact = match
        return (0, int(track.is_generated), index, inexact, position)

    return min(enumerate(tracks), key=rank)[1]


def _language_match(code: str, wanted: Sequence[str]) -> tuple[int, int] | None:
    """(position in `wanted`, 0 exact / 1 same base language) — so "en" also accepts an "en-GB" track."""
    for index, want in enumerate(wanted):
        if code == want:
            return (index, 0)
    base = code.split("-")[0]
    for index, want in enumerate(wanted):
        if base == want.split("-")[0]:
            return (index, 1)
    return None


def _clean_cues(snippets: Sequence[FetchedTranscriptSnippet]) -> tuple[tuple[float, str], ...]:
    """Whitespace-normalised cues without the empty ones; the library has already unescaped entities."""
    cues = ((snippet.start, " ".join(snippet.text.split())) for snippet in snippets)
    return tuple((start, text) for start, text in cues if text)


def _service_error(exc: CouldNotRetrieveTranscript, video_id: str) -> ServiceError:
    link = video_link(video_id)
    if isinstance(exc, RequestBlocked):  # IpBlocked (HTTP 429 / reCAPTCHA page) and the bot check
        return TransientServiceError(f"{BLOCKED} ({link})")
    if isinstance(exc, YouTubeRequestFailed):
        return _request_failed(exc, link)
    if isinstance(exc, VideoUnplayable):
        reason = exc.reason or "no reason given"
        if "private" in reason.lower():
            return PermanentServiceError(f"{PRIVATE_OR_UNAVAILABLE} ({link})")
        return PermanentServiceError(f"YouTube will not play this video ({reason}); it may be private, "
                                     f"members-only or blocked in this server's country. ({link})")
    for kinds, message in _PERMANENT:
        if isinstance(exc, kinds):
            return PermanentServiceError(f"{message} ({link})")
    return PermanentServiceError(f"YouTube captions could not be retrieved: {exc.cause} ({link})")


def _request_failed(exc: YouTubeRequestFailed, link: str) -> ServiceError:
    # The library keeps only the HTTPError's text; the error itself (with the status) is the implicit context.
    cause = exc.__context__
    response = cause.response if isinstance(cause, requests.HTTPError) else None
    status = response.status_code if response is not None else None
    if status is None or status >= 500:
        return TransientServiceError(f"YouTube failed to answer ({exc.reason}); try again later. ({link})")
    return PermanentServiceError(f"YouTube refused the request with HTTP {status}. ({link})")
