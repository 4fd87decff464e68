"""Playlist expansion against the fake YouTube: the page's first videos, then InnerTube browse continuations."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

import pytest

from backend.adapters.youtube.playlist import browse_client, continuation_batch, first_batch
from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from tests.contracts import TEST_TIMEOUT
from tests.fakes.youtube_innertube import continuation_token, playlist_page
from tests.fakes.youtube_pages import PlaylistLayout
from tests.fakes.youtube_server import DECOY_VIDEO_ID, FAKE_INNERTUBE_API_KEY, BrowseState, YouTubeFake

VIDEO = "OpenGuru001"
OTHER = "OpenGuru002"
THIRD = "OpenGuru-_3"
PLAYLIST = "PLopenguruFake0123456789abcdefXYZ"
BROWSE = "POST /youtubei/v1/browse"
SHORT_TIMEOUT = 0.3


def video_ids(count: int) -> list[str]:
    return [f"Vid{index:08d}" for index in range(count)]


def fetcher_for(youtube_fake: YouTubeFake, *, max_videos: int = 1000,
                timeout: float = TEST_TIMEOUT) -> YouTubeTranscriptFetcher:
    return YouTubeTranscriptFetcher(http_session=youtube_fake.session(), timeout=timeout,
                                    max_playlist_videos=max_videos)


@pytest.mark.parametrize("escaped", [False, True])
def test_a_long_playlist_is_listed_through_continuations(youtube_fake: YouTubeFake,
                                                         youtube_fetcher: YouTubeTranscriptFetcher,
                                                         escaped: bool) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(250), escaped=escaped)

    playlist = youtube_fetcher.playlist(PLAYLIST)

    assert playlist.video_ids == tuple(video_ids(250))
    assert playlist.truncation == ""
    assert youtube_fake.paths() == ["GET /playlist", BROWSE, BROWSE]
    browse = urlsplit(youtube_fake.sent[1].url)
    assert (browse.netloc, parse_qs(browse.query)) == (
        "www.youtube.com", {"key": [FAKE_INNERTUBE_API_KEY], "prettyPrint": ["false"]})
    assert {sent.timeout for sent in youtube_fake.sent} == {TEST_TIMEOUT}


@pytest.mark.parametrize("count", [1, 100])
def test_a_playlist_on_one_page_makes_no_browse_request(youtube_fake: YouTubeFake,
                                                        youtube_fetcher: YouTubeTranscriptFetcher, count: int) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(count))

    assert youtube_fetcher.playlist_video_ids(PLAYLIST) == video_ids(count)
    assert youtube_fake.paths() == ["GET /playlist"]


@pytest.mark.parametrize("escaped", [False, True])
def test_playlist_expands_in_order_without_repeats(youtube_fake: YouTubeFake,
                                                   youtube_fetcher: YouTubeTranscriptFetcher, escaped: bool) -> None:
    youtube_fake.add_playlist(PLAYLIST, [OTHER, VIDEO, OTHER, THIRD], escaped=escaped)

    assert youtube_fetcher.playlist_video_ids(PLAYLIST) == [OTHER, VIDEO, THIRD]
    assert DECOY_VIDEO_ID not in youtube_fetcher.playlist_video_ids(PLAYLIST)
    assert [sent.url for sent in youtube_fake.sent][0] == f"https://www.youtube.com/playlist?list={PLAYLIST}"


def test_repeats_across_continuations_are_dropped(youtube_fake: YouTubeFake,
                                                  youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_playlist(PLAYLIST, [OTHER, VIDEO, OTHER, THIRD, VIDEO], page_size=2)

    assert youtube_fetcher.playlist_video_ids(PLAYLIST) == [OTHER, VIDEO, THIRD]
    assert youtube_fake.paths().count(BROWSE) == 2


@pytest.mark.parametrize(("count", "limit", "taken", "requests"), [
    (250, 150, 150, 1),
    (250, 100, 100, 1),
    (1500, 1000, 1000, 10),
])
def test_a_playlist_over_the_limit_is_cut_and_says_so(youtube_fake: YouTubeFake, caplog: pytest.LogCaptureFixture,
                                                      count: int, limit: int, taken: int, requests: int) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(count))

    with caplog.at_level(logging.WARNING, logger="backend.adapters.youtube"):
        playlist = fetcher_for(youtube_fake, max_videos=limit).playlist(PLAYLIST)

    assert playlist.video_ids == tuple(video_ids(taken))
    assert f"Only the first {taken} videos" in playlist.truncation
    assert f"more than {limit} videos" in playlist.truncation and "OPENGURU_PLAYLIST_MAX_VIDEOS" in playlist.truncation
    assert youtube_fake.paths().count(BROWSE) == requests
    warnings = [record.getMessage() for record in caplog.records if record.name.startswith("backend.")]
    assert warnings == [f"YouTube playlist {PLAYLIST}: {playlist.truncation}"]


@pytest.mark.parametrize("count", [100, 200])
def test_a_playlist_exactly_at_the_limit_is_complete(youtube_fake: YouTubeFake, count: int) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(count))

    playlist = fetcher_for(youtube_fake, max_videos=count).playlist(PLAYLIST)

    assert (len(playlist.video_ids), playlist.truncation) == (count, "")


def test_continuation_requests_are_capped(youtube_fake: YouTubeFake) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(300), page_size=5)
    fetcher = fetcher_for(youtube_fake, max_videos=100)

    playlist = fetcher.playlist(PLAYLIST)

    assert fetcher.max_playlist_requests == 3
    assert playlist.video_ids == tuple(video_ids(20))
    assert "after 3 requests" in playlist.truncation
    assert youtube_fake.paths().count(BROWSE) == 3


@pytest.mark.parametrize(("browse", "message"), [
    ("unavailable", "HTTP 503"),
    ("rate_limited", "HTTP 429"),
    ("garbage", "unreadable answer"),
])
def test_a_failing_continuation_is_transient(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
                                             browse: BrowseState, message: str) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(250), browse=browse)

    with pytest.raises(TransientServiceError, match=message):
        youtube_fetcher.playlist(PLAYLIST)
    assert youtube_fake.paths() == ["GET /playlist", BROWSE]


def test_a_stalled_continuation_times_out_as_transient(youtube_fake: YouTubeFake) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(150))
    youtube_fake.stall("/youtubei/v1/browse")

    with pytest.raises(TransientServiceError, match="Could not reach YouTube"):
        fetcher_for(youtube_fake, timeout=SHORT_TIMEOUT).playlist(PLAYLIST)


def test_a_refused_continuation_keeps_the_first_page_and_says_so(youtube_fake: YouTubeFake,
                                                                 youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(250), browse="refused")

    playlist = youtube_fetcher.playlist(PLAYLIST)

    assert playlist.video_ids == tuple(video_ids(100))
    assert "Only the first 100 videos" in playlist.truncation and "HTTP 403" in playlist.truncation


@pytest.mark.parametrize(("layout", "count", "taken", "why"), [
    ("unknown", 40, 40, ""),
    ("unknown", 150, 100, "a layout this version cannot follow"),
    ("no_ytcfg", 60, 60, ""),
    ("no_ytcfg", 150, 100, "lacks the client settings (ytcfg)"),
])
def test_pages_without_the_expected_structure(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
                                              layout: PlaylistLayout, count: int, taken: int, why: str) -> None:
    # "unknown" lists the videos in renderers the parser does not know: the old regex over ytInitialData finds them.
    youtube_fake.add_playlist(PLAYLIST, video_ids(count), layout=layout)

    playlist = youtube_fetcher.playlist(PLAYLIST)

    assert playlist.video_ids == tuple(video_ids(taken))
    assert (why in playlist.truncation) if why else playlist.truncation == ""
    assert youtube_fake.paths() == ["GET /playlist"]


@pytest.mark.parametrize("setup", ["missing", "private", "empty"])
def test_playlist_without_videos_is_permanent(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher,
                                              setup: str) -> None:
    if setup == "private":
        youtube_fake.add_playlist(PLAYLIST, [VIDEO], state="private")
    elif setup == "empty":
        youtube_fake.add_playlist(PLAYLIST, [])

    with pytest.raises(PermanentServiceError, match="is private, empty or does not exist"):
        youtube_fetcher.playlist_video_ids(PLAYLIST)


def test_playlist_failures(youtube_fake: YouTubeFake, youtube_fetcher: YouTubeTranscriptFetcher) -> None:
    youtube_fake.add_playlist(PLAYLIST, [VIDEO], state="rate_limited")

    with pytest.raises(TransientServiceError, match="HTTP 429"):
        youtube_fetcher.playlist_video_ids(PLAYLIST)
    with pytest.raises(PermanentServiceError, match="is not a YouTube playlist id"):
        youtube_fetcher.playlist_video_ids("PL/../../etc")
    youtube_fake.stall("/playlist")
    slow = fetcher_for(youtube_fake, timeout=SHORT_TIMEOUT)
    with pytest.raises(TransientServiceError, match="Could not reach YouTube"):
        slow.playlist_video_ids(PLAYLIST)


def test_the_limit_must_be_positive(youtube_fake: YouTubeFake) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        fetcher_for(youtube_fake, max_videos=0)


@pytest.mark.parametrize(("key", "token", "status"), [
    (FAKE_INNERTUBE_API_KEY, continuation_token(PLAYLIST, 100), 200),
    (FAKE_INNERTUBE_API_KEY, "not-a-token", 400),
    (FAKE_INNERTUBE_API_KEY, continuation_token("PLunknown", 100), 400),
    (FAKE_INNERTUBE_API_KEY, continuation_token(PLAYLIST, 999), 400),
    ("AIzaWrongKey", continuation_token(PLAYLIST, 100), 400),
])
def test_the_fake_browse_endpoint_checks_key_and_token(youtube_fake: YouTubeFake, key: str, token: str,
                                                       status: int) -> None:
    youtube_fake.add_playlist(PLAYLIST, video_ids(150))
    context = {"client": {"clientName": "WEB", "clientVersion": "2.20250101.00.00"}}

    response = youtube_fake.session().post("https://www.youtube.com/youtubei/v1/browse", params={"key": key},
                                           json={"context": context, "continuation": token}, timeout=TEST_TIMEOUT)

    assert response.status_code == status
    if status == 200:
        assert continuation_batch(response.json()).video_ids == tuple(video_ids(150)[100:])


def test_parsing_reads_every_ytcfg_call_and_reload_actions() -> None:
    page = ('<script>ytcfg.set({"INNERTUBE_API_KEY": "AIzaKey"});</script>'
            '<script>ytcfg.set({"INNERTUBE_CONTEXT": {"client": {"clientName": "WEB", "clientVersion": "2.1"}}});'
            '</script>')
    reload = {"onResponseReceivedActions": [{"reloadContinuationItemsCommand": {"continuationItems": [
        {"playlistVideoRenderer": {"videoId": VIDEO}}, {"playlistVideoRenderer": {"videoId": "too-short"}}]}}]}

    client = browse_client(page)

    assert client is not None and client.params() == {"key": "AIzaKey", "prettyPrint": "false"}
    assert client.body("tok") == {"context": {"client": {"clientName": "WEB", "clientVersion": "2.1"}},
                                  "continuation": "tok"}
    assert browse_client("<html>ytcfg.set({broken</html>") is None
    assert continuation_batch(reload).video_ids == (VIDEO,)
    assert continuation_batch({"error": {}}).video_ids == ()


def test_nothing_outside_ytinitialdata_counts_as_a_playlist_video() -> None:
    assert first_batch(playlist_page(None)).video_ids == ()
    assert first_batch("<html>no data at all</html>").video_ids == ()
