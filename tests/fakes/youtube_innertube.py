"""The fake YouTube's playlist pages (ytcfg, ytInitialData) and its InnerTube browse continuation answers."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from tests.fakes.youtube_pages import DECOY_VIDEO_ID, FAKE_INNERTUBE_API_KEY, FakePlaylist, script_json

FAKE_CLIENT_VERSION = "2.20250101.00.00"
# Real continuation tokens are base64 protobufs that start like this; ours carry "<playlist id>:<offset>".
_TOKEN_PREFIX = "4qmFsgFake"
_CLICK_TRACKING = "CBkQ7zsYACITCPakeTrackingParams="


def continuation_token(playlist_id: str, offset: int) -> str:
    encoded = base64.urlsafe_b64encode(f"{playlist_id}:{offset}".encode()).decode().rstrip("=")
    return _TOKEN_PREFIX + encoded


def token_position(token: str) -> tuple[str, int] | None:
    """(playlist id, offset of the next video) a token of ours stands for; None for anything else."""
    if not token.startswith(_TOKEN_PREFIX):
        return None
    encoded = token.removeprefix(_TOKEN_PREFIX)
    try:
        playlist_id, _, offset = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode().partition(":")
        return playlist_id, int(offset)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def playlist_ytcfg() -> dict[str, Any]:
    """What the playlist page's ytcfg.set({...}) carries for the web client's continuation requests."""
    client = {"hl": "en", "gl": "US", "visitorData": "CgtGYWtlVmlzaXRvcg%3D%3D", "userAgent": "Mozilla/5.0,gzip(gfe)",
              "clientName": "WEB", "clientVersion": FAKE_CLIENT_VERSION, "originalUrl": "https://www.youtube.com/"}
    return {"INNERTUBE_API_KEY": FAKE_INNERTUBE_API_KEY, "INNERTUBE_CLIENT_NAME": "WEB",
            "INNERTUBE_CLIENT_VERSION": FAKE_CLIENT_VERSION, "INNERTUBE_CONTEXT_CLIENT_NAME": 1,
            "INNERTUBE_CONTEXT": {"client": client, "user": {"lockedSafetyMode": False},
                                  "request": {"useSsl": True}}}


def _video_item(playlist: FakePlaylist, index: int) -> dict[str, Any]:
    video_id, pid = playlist.video_ids[index], playlist.playlist_id
    watch = {"watchEndpoint": {"videoId": video_id, "playlistId": pid, "index": index}}
    if playlist.layout == "unknown":
        return {"lockupViewModel": {"contentId": video_id, "contentType": "LOCKUP_CONTENT_TYPE_VIDEO",
                                    "rendererContext": {"commandContext": {"onTap": {"innertubeCommand": watch}}}}}
    return {"playlistVideoRenderer": {
        "videoId": video_id, "index": {"simpleText": str(index + 1)}, "isPlayable": True,
        "thumbnail": {"thumbnails": [{"url": f"https://i.ytimg.com/vi/{video_id}/hqdefault.jpg"}]},
        "title": {"runs": [{"text": f"Video {index + 1}"}]}, "navigationEndpoint": watch,
    }}


def _continuation_item(token: str, *, wrapped: bool) -> dict[str, Any]:
    # YouTube puts the token straight under continuationEndpoint or, in other versions, inside a
    # commandExecutorCommand; the page uses one shape and the browse answers the other, so both are exercised.
    command = {"continuationCommand": {"token": token, "request": "CONTINUATION_REQUEST_TYPE_BROWSE"}}
    metadata = {"commandMetadata": {"webCommandMetadata": {"sendPost": True, "apiUrl": "/youtubei/v1/browse"}}}
    endpoint: dict[str, Any] = {"clickTrackingParams": _CLICK_TRACKING, **metadata, **command}
    if wrapped:
        endpoint = {"clickTrackingParams": _CLICK_TRACKING, "commandExecutorCommand": {"commands": [
            {"clickTrackingParams": _CLICK_TRACKING, "signalAction": {"signal": "REFRESH_PLAYLIST_VOTES"}},
            {"clickTrackingParams": _CLICK_TRACKING, **metadata, **command}]}}
    return {"continuationItemRenderer": {"trigger": "CONTINUATION_TRIGGER_ON_ITEM_SHOWN",
                                         "continuationEndpoint": endpoint}}


def playlist_items(playlist: FakePlaylist, offset: int, *, wrapped: bool) -> list[dict[str, Any]]:
    """One page of the playlist from `offset`, ending with a continuation item while videos remain."""
    stop = min(offset + playlist.page_size, len(playlist.video_ids))
    items = [_video_item(playlist, index) for index in range(offset, stop)]
    if stop < len(playlist.video_ids):
        items.append(_continuation_item(continuation_token(playlist.playlist_id, stop), wrapped=wrapped))
    return items


def browse_response(playlist: FakePlaylist, offset: int) -> dict[str, Any]:
    """POST /youtubei/v1/browse's answer to a continuation token: the next page of the playlist."""
    action = {"appendContinuationItemsAction": {
        "continuationItems": playlist_items(playlist, offset, wrapped=True), "targetId": "pl-video-list"}}
    return {"responseContext": {"visitorData": "CgtGYWtlVmlzaXRvcg%3D%3D"}, "trackingParams": _CLICK_TRACKING,
            "onResponseReceivedActions": [{"clickTrackingParams": _CLICK_TRACKING, **action}]}


def playlist_data(playlist: FakePlaylist | None) -> dict[str, Any]:
    """ytInitialData of a playlist page: the first page of videos, or the alert of a private or missing list."""
    if playlist is None or playlist.state == "private":
        message = "The playlist does not exist." if playlist is None else "This playlist is private."
        return {"responseContext": {}, "alerts": [{"alertWithButtonRenderer": {
            "type": "ERROR", "text": {"simpleText": message}}}]}
    pid = playlist.playlist_id
    items = playlist_items(playlist, 0, wrapped=False)
    if playlist.layout == "unknown":
        list_renderer: dict[str, Any] = {"richGridRenderer": {"contents": items}}
    else:
        list_renderer = {"playlistVideoListRenderer": {"contents": items, "playlistId": pid, "isEditable": False,
                                                       "targetId": "pl-video-list"}}
    tab = {"tabRenderer": {"selected": True, "content": {"sectionListRenderer": {"contents": [
        {"itemSectionRenderer": {"contents": [list_renderer]}}]}}}}
    header: dict[str, Any] = {"playlistId": pid, "title": {"simpleText": playlist.title},
                              "numVideosText": {"runs": [{"text": f"{len(playlist.video_ids)} videos"}]}}
    if playlist.video_ids:
        header["playEndpoint"] = {"watchEndpoint": {"videoId": playlist.video_ids[0], "playlistId": pid}}
    return {"responseContext": {}, "contents": {"twoColumnBrowseResultsRenderer": {"tabs": [tab]}},
            "header": {"playlistHeaderRenderer": header},
            "metadata": {"playlistMetadataRenderer": {"title": playlist.title}}}


def playlist_page(playlist: FakePlaylist | None) -> str:
    """The HTML of /playlist?list=…: ytcfg in the head, then ytInitialData, and a decoy video id outside it."""
    initial = script_json(playlist_data(playlist))
    if playlist is not None and playlist.escaped:
        hexed = (initial.replace("\\", "\\\\").replace('"', "\\x22").replace("'", "\\x27")
                 .replace("{", "\\x7b").replace("}", "\\x7d"))
        initial = f"'{hexed}'"
    ytcfg = "" if playlist is not None and playlist.layout == "no_ytcfg" else (
        f'<script nonce="fake">ytcfg.set({script_json(playlist_ytcfg())});</script>')
    decoy = script_json({"watchEndpoint": {"videoId": DECOY_VIDEO_ID}})
    return ('<!DOCTYPE html><html lang="en"><head><title>Playlist - YouTube</title>'
            f'{ytcfg}</head><body>'
            f'<script nonce="fake">var ytPreloadedCommand = {decoy};</script>'
            f'<script nonce="fake">var ytInitialData = {initial};</script></body></html>')
