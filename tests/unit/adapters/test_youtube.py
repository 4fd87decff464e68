"""YouTube links, and the transcript fetcher running the real youtube-transcript-api against a fake YouTube."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from backend.adapters.youtube.transcripts import (
    BLOCKED,
    NO_CAPTIONS,
    PRIVATE_OR_UNAVAILABLE,
    YouTubeTranscriptFetcher,
)
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError
from backend.pipeline.youtube_urls import YouTubeRef, parse_youtube_url, video_link
from tests.contracts import TEST_TIMEOUT
from tests.fakes.youtube_server import (
    FAKE_INNERTUBE_API_KEY,
    VideoState,
    YouTubeFake,
    YouTubeFakeSession,
)

VIDEO = "OpenGuru001"
OTHER = "OpenGuru002"
THIRD = "OpenGuru-_3"
PLAYLIST = "PLopenguruFake0123456789abcdefXYZ"
SHORT_TIMEOUT = 0.3


def video_ref(video_id: str = "dQw4w9WgXcQ") -> YouTubeRef:
    return YouTubeRef(kind="video", id=video_id)


@pytest.mark.parametrize(("url", "expected"), [
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", video_ref()),
    ("https://youtu.be/dQw4w9WgXcQ?si=Abc123&t=42", video_ref()),
    ("https://www.youtube.com/shorts/dQw4w9WgXcQ", video_ref()),
    ("https://www.youtube.com/embed/dQw4w9WgXcQ?start=10", video_ref()),
    ("https://www.youtube.com/live/dQw4w9WgXcQ?feature=share", video_ref()),
    ("https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ", video_ref()),
    ("https://m.youtube.com/watch?v=dQw4w9WgXcQ&feature=youtu.be", video_ref()),
    ("https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=OLAK5uy_kFakeAlbum", video_ref()),
    ("youtube.com/watch?v=dQw4w9WgXcQ", video_ref()),
    ("  https://WWW.YouTube.com/watch?v=dQw4w9WgXcQ#t=30  ", video_ref()),
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLabc_-123&index=4", video_ref()),
    ("https://www.youtube.com/playlist?list=PLabc_-123", YouTubeRef(kind="playlist", id="PLabc_-123")),
    ("https://www.youtube.com/watch?list=PLabc_-123", YouTubeRef(kind="playlist", id="PLabc_-123")),
    ("https://m.youtube.com/playlist?list=UUabc_-123", YouTubeRef(kind="playlist", id="UUabc_-123")),
])
def test_parse_youtube_url_recognises_videos_and_playlists(url: str, expected: YouTubeRef) -> None:
    assert parse_youtube_url(url) == expected


@pytest.mark.parametrize(("url", "message"), [
    ("", "Paste a YouTube video or playlist link"),
    ("https://vimeo.com/123456", "is not a YouTube link"),
    ("ftp://www.youtube.com/watch?v=dQw4w9WgXcQ", "is not a YouTube link"),
    ("https://www.youtube.com.evil.example/watch?v=dQw4w9WgXcQ", "is not a YouTube link"),
    ("https://www.youtube.com/watch?v=tooShort", "valid YouTube video id"),
    ("https://youtu.be/", "valid YouTube video id"),
    ("https://www.youtube.com/watch", "the v= parameter is missing"),
    ("https://www.youtube.com/playlist", "valid YouTube playlist id"),
    ("https://www.youtube.com/@SomeChannel/videos", "is a channel link"),
    ("https://www.youtube.com/channel/UCabcdefghijklmnopqrstuv", "is a channel link"),
    ("https://www.youtube.com/playlist?list=WL", "personal list"),
    ("https://www.youtube.com/playlist?list=RDdQw4w9WgXcQ", "YouTube Mix"),
    ("https://www.youtube.com/feed/trending", "not a YouTube video or playlist link"),
])
def test_parse_youtube_url_rejects_other_links_clearly(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_youtube_url(url)


@pytest.mark.parametrize(("seconds", "expected"), [
    (None, "https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
    (83.9, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=83s"),
    (0.0, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=0s"),
    (-2.0, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=0s"),
])
def test_video_link_uses_whole_seconds(seconds: float | None, expected: str) -> None:
    assert video_link("dQw4w9WgXcQ", seconds) == expected


def test_transcript_comes_through_the_real_library(youtube_fake: YouTubeFake,
                                                   youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_video(VIDEO, title="Intro to   OpenGuru", cues=[
        (0.0, "Welcome to  the\nshow"), (2.5, 'Q&A: it\'s "great"'), (3.0, "   "), (3.5, ""), (5.25, "Bye"),
    ])

    transcript = youtube_fetcher.transcript(VIDEO)

    assert transcript.video_id == VIDEO
    assert transcript.title == "Intro to OpenGuru"
    assert transcript.language == "en"
    assert transcript.cues == ((0.0, "Welcome to the show"), (2.5, 'Q&A: it\'s "great"'), (5.25, "Bye"))
    assert youtube_fake.paths() == ["GET /watch", "POST /youtubei/v1/player", "GET /api/timedtext", "GET /oembed"]
    watch, player, timedtext, oembed = (urlsplit(sent.url) for sent in youtube_fake.sent)
    assert (watch.netloc, parse_qs(watch.query)) == ("www.youtube.com", {"v": [VIDEO]})
    assert parse_qs(player.query) == {"key": [FAKE_INNERTUBE_API_KEY]}
    assert parse_qs(timedtext.query)["lang"] == ["en"] and "fmt" not in parse_qs(timedtext.query)
    assert parse_qs(oembed.query) == {"url": [video_link(VIDEO)], "format": ["json"]}


def test_caption_markup_is_unescaped_and_stripped(youtube_fake: YouTubeFake,
                                                  youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_video(VIDEO)
    youtube_fake.add_track(VIDEO, language="en", raw=True, cues=[(1.0, "I&#39;m <i>so</i>&nbsp;happy &amp; calm")])

    assert youtube_fetcher.transcript(VIDEO).cues == ((1.0, "I'm so happy & calm"),)


@pytest.mark.parametrize(("tracks", "languages", "expected"), [
    ([("en", True), ("en", False)], ("en",), ("en", "manual en")),
    ([("de", False), ("en", True)], ("en",), ("en", "generated en")),
    ([("en", False), ("de", True)], ("de", "en"), ("en", "manual en")),
    ([("de", True), ("en", True)], ("de", "en"), ("de", "generated de")),
    ([("en-GB", False), ("en", True)], ("en",), ("en-GB", "manual en-GB")),
    ([("fr", True), ("nl", False)], ("en",), ("nl", "manual nl")),
    ([("fr", True)], ("en",), ("fr", "generated fr")),
])
def test_language_preference_is_manual_then_generated_then_any(
        youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
        tracks: list[tuple[str, bool]], languages: tuple[str, ...], expected: tuple[str, str]) -> None:
    youtube_fake.add_video(VIDEO)
    for language, generated in tracks:
        kind = "generated" if generated else "manual"
        youtube_fake.add_track(VIDEO, language=language, generated=generated, cues=[(0.0, f"{kind} {language}")])

    transcript = youtube_fetcher.transcript(VIDEO, languages=languages)

    assert (transcript.language, transcript.cues[0][1]) == expected


@pytest.mark.parametrize(("state", "error", "message"), [
    ("private", PermanentServiceError, PRIVATE_OR_UNAVAILABLE),
    ("unavailable", PermanentServiceError, PRIVATE_OR_UNAVAILABLE),
    ("age_restricted", PermanentServiceError, "This video is age-restricted"),
    ("members_only", PermanentServiceError, "members-only"),
    ("no_captions", PermanentServiceError, NO_CAPTIONS),
    ("captions_forbidden", PermanentServiceError, "HTTP 403"),
    ("po_token", PermanentServiceError, "updating that library usually fixes this"),
    ("bot_check", TransientServiceError, BLOCKED),
    ("rate_limited", TransientServiceError, BLOCKED),
    ("recaptcha", TransientServiceError, BLOCKED),
    ("captions_rate_limited", TransientServiceError, BLOCKED),
    ("player_error", TransientServiceError, "try again later"),
])
def test_youtube_failures_map_to_service_errors(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
                                                state: VideoState, error: type[ServiceError], message: str) -> None:
    youtube_fake.add_video(VIDEO, cues=[(0.0, "hello")], state=state)

    with pytest.raises(error) as raised:
        youtube_fetcher.transcript(VIDEO)

    assert message in str(raised.value)
    assert video_link(VIDEO) in str(raised.value)


def test_unknown_video_and_video_without_tracks(youtube_fake: YouTubeFake,
                                                youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_video(OTHER)  # playable, but nobody ever added captions

    with pytest.raises(PermanentServiceError, match=PRIVATE_OR_UNAVAILABLE.split(" (")[0]):
        youtube_fetcher.transcript(VIDEO)
    with pytest.raises(PermanentServiceError, match=NO_CAPTIONS):
        youtube_fetcher.transcript(OTHER)


def test_malformed_video_id_is_refused_without_a_request(youtube_fake: YouTubeFake,
                                                         youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    with pytest.raises(PermanentServiceError, match="is not a YouTube video id"):
        youtube_fetcher.transcript("https://www.youtube.com/watch?v=OpenGuru001")
    assert youtube_fake.sent == []


def test_consent_page_is_passed_with_the_consent_cookie(youtube_fake: YouTubeFake,
                                                        youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_video(VIDEO, cues=[(0.0, "hello")], state="consent")

    assert youtube_fetcher.transcript(VIDEO).cues == ((0.0, "hello"),)
    assert youtube_fake.paths()[:3] == ["GET /watch", "GET /watch", "POST /youtubei/v1/player"]


@pytest.mark.parametrize("oembed_status", [401, 404, 500])
def test_title_failure_is_not_fatal(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
                                    oembed_status: int) -> None:
    youtube_fake.add_video(VIDEO, title="Never seen", cues=[(0.0, "hello")]).oembed_status = oembed_status

    transcript = youtube_fetcher.transcript(VIDEO)

    assert (transcript.title, transcript.cues) == (f"YouTube video {VIDEO}", ((0.0, "hello"),))


def test_every_request_carries_the_fetcher_timeout(youtube_fake: YouTubeFake,
                                                   youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_video(VIDEO, cues=[(0.0, "hello")])
    youtube_fake.add_playlist(PLAYLIST, [VIDEO])

    youtube_fetcher.transcript(VIDEO)
    youtube_fetcher.playlist_video_ids(PLAYLIST)

    assert len(youtube_fake.sent) == 5
    assert {sent.timeout for sent in youtube_fake.sent} == {TEST_TIMEOUT}


def test_a_reused_session_takes_the_newest_timeout(youtube_fake: YouTubeFake) -> None:
    youtube_fake.add_video(VIDEO, cues=[(0.0, "hello")])
    session = youtube_fake.session()
    YouTubeTranscriptFetcher(http_session=session, timeout=7.0)

    YouTubeTranscriptFetcher(http_session=session, timeout=3.0).transcript(VIDEO)

    assert {sent.timeout for sent in youtube_fake.sent} == {3.0}


@pytest.mark.parametrize("path", ["/watch", "/youtubei/v1/player", "/api/timedtext"])
def test_a_stalled_youtube_times_out_as_transient(youtube_fake: YouTubeFake, path: str) -> None:
    youtube_fake.add_video(VIDEO, cues=[(0.0, "hello")])
    youtube_fake.stall(path)
    fetcher = YouTubeTranscriptFetcher(http_session=youtube_fake.session(), timeout=SHORT_TIMEOUT)
    started = time.monotonic()

    with pytest.raises(TransientServiceError, match="Could not reach YouTube"):
        fetcher.transcript(VIDEO)

    assert time.monotonic() - started < 5


def test_a_stalled_oembed_only_costs_the_title(youtube_fake: YouTubeFake) -> None:
    youtube_fake.add_video(VIDEO, title="Slow title", cues=[(0.0, "hello")])
    youtube_fake.stall("/oembed")
    # The other requests must succeed: a timeout a busy machine cannot trip on a local reply.
    fetcher = YouTubeTranscriptFetcher(http_session=youtube_fake.session(), timeout=3.0)

    assert fetcher.transcript(VIDEO).title == f"YouTube video {VIDEO}"


def test_unreachable_youtube_is_transient() -> None:
    fetcher = YouTubeTranscriptFetcher(http_session=YouTubeFakeSession("http://127.0.0.1:1", []), timeout=1.0)

    with pytest.raises(TransientServiceError, match="Could not reach YouTube"):
        fetcher.transcript(VIDEO)
    with pytest.raises(TransientServiceError, match="Could not reach YouTube"):
        fetcher.playlist_video_ids(PLAYLIST)


def test_the_fake_session_never_leaves_for_the_internet(youtube_fake: YouTubeFake) -> None:
    with pytest.raises(requests.ConnectionError, match="tests never touch the internet"):
        youtube_fake.session().get("https://example.com/", timeout=1)
