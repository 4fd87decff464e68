"""Reads a YouTube playlist's videos from its page (ytcfg, ytInitialData) and from InnerTube browse continuations."""

# YouTube's playlist page lists only the first ~100 videos; its web client asks for the rest with
# POST /youtubei/v1/browse {"context": INNERTUBE_CONTEXT, "continuation": token}, and each answer appends more
# playlistVideoRenderer items and, while more remain, a continuationItemRenderer with the next token. This module
# only parses (pure functions over text and JSON); the HTTP calls and their limits live in the fetcher.

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from backend.pipeline.youtube_urls import is_video_id

BROWSE_URL = "https://www.youtube.com/youtubei/v1/browse"
_DECODER = json.JSONDecoder()
# `var ytInitialData = {...};` on the desktop page, `window["ytInitialData"] = ...` on older ones.
_INITIAL_DATA_START = re.compile(r"""ytInitialData["']?\]?\s*=\s*""")
_INITIAL_DATA_TEXT = re.compile(r"ytInitialData\s*=\s*(.+?);\s*</script>", re.DOTALL)
_JS_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'", re.DOTALL)
_JS_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.DOTALL)
_JS_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_YTCFG_SET = re.compile(r"ytcfg\.set\s*\(\s*(?=\{)")
# ytInitialData is plain JSON on the desktop page but a \x22-escaped JavaScript string on some page variants.
_VIDEO_ID_IN_DATA = re.compile(r'(?:"|\\x22)videoId(?:"|\\x22):\s*(?:"|\\x22)([A-Za-z0-9_-]{11})(?:"|\\x22)')
_CONTINUATION_MARK = re.compile(r"(?:\"|\\x22)continuationCommand(?:\"|\\x22)")
# YouTube answers the browse endpoint with one of these actions, each holding `continuationItems`.
_CONTINUATION_ACTIONS = ("appendContinuationItemsAction", "reloadContinuationItemsCommand")


@dataclass(frozen=True)
class PlaylistBatch:
    """The video ids of one playlist page or continuation answer, in order, and what comes after them.

    `continuation` is the token for the next batch ("" at the end). `more_unread` is True when the page
    announces more videos in a layout this parser does not understand, so the list is known to be incomplete.
    """

    video_ids: tuple[str, ...]
    continuation: str = ""
    more_unread: bool = False


@dataclass(frozen=True)
class BrowseClient:
    """What continuation requests need from the page's ytcfg: the API key ("" if absent) and the client context."""

    api_key: str
    context: dict[str, Any]

    def params(self) -> dict[str, str]:
        key = {"key": self.api_key} if self.api_key else {}
        return {**key, "prettyPrint": "false"}

    def body(self, token: str) -> dict[str, Any]:
        return {"context": self.context, "continuation": token}


def first_batch(page: str) -> PlaylistBatch:
    """The playlist's own items on its page and the first continuation token.

    Only `playlistVideoListRenderer.contents` counts, so videos elsewhere on the page (recommendations, the
    header's play button) are never taken. Without that structure (a layout change) the video ids found in
    ytInitialData's text, or in the whole page, are the best remaining answer.
    """
    renderer = _find(initial_data(page), "playlistVideoListRenderer")
    if isinstance(renderer, dict) and isinstance(renderer.get("contents"), list):
        return batch_of(renderer["contents"])
    match = _INITIAL_DATA_TEXT.search(page)
    text = match.group(1) if match else page
    ids = tuple(dict.fromkeys(_VIDEO_ID_IN_DATA.findall(text)))
    return PlaylistBatch(video_ids=ids, more_unread=_CONTINUATION_MARK.search(text) is not None)


def continuation_batch(payload: Any) -> PlaylistBatch:
    """The items of a browse continuation answer (`onResponseReceivedActions[*].*.continuationItems`)."""
    actions = payload.get("onResponseReceivedActions") if isinstance(payload, dict) else None
    items: list[Any] = []
    for action in actions if isinstance(actions, list) else []:
        for name in _CONTINUATION_ACTIONS:
            found = _find(action.get(name) if isinstance(action, dict) else None, "continuationItems")
            items.extend(found if isinstance(found, list) else [])
    return batch_of(items)


def batch_of(items: list[Any]) -> PlaylistBatch:
    """Video ids of `playlistVideoRenderer` items and the token of a `continuationItemRenderer`, if any."""
    ids: list[str] = []
    token = ""
    for item in items:
        if not isinstance(item, dict):
            continue
        video = item.get("playlistVideoRenderer")
        video_id = video.get("videoId") if isinstance(video, dict) else None
        if isinstance(video_id, str) and is_video_id(video_id):
            ids.append(video_id)
        # The token sits at continuationEndpoint.continuationCommand or, in other page versions, inside
        # continuationEndpoint.commandExecutorCommand.commands[*]; a search finds it in both.
        command = _find(item.get("continuationItemRenderer"), "continuationCommand")
        if isinstance(command, dict) and isinstance(command.get("token"), str):
            token = command["token"]
    return PlaylistBatch(video_ids=tuple(ids), continuation=token)


def browse_client(page: str) -> BrowseClient | None:
    """INNERTUBE_API_KEY and INNERTUBE_CONTEXT from the page's `ytcfg.set({...})` calls; None without a context."""
    config: dict[str, Any] = {}
    for match in _YTCFG_SET.finditer(page):
        try:
            value, _ = _DECODER.raw_decode(page, match.end())
        except ValueError:
            continue
        if isinstance(value, dict):
            config.update(value)
    context = config.get("INNERTUBE_CONTEXT")
    if not isinstance(context, dict) or not isinstance(context.get("client"), dict):
        return None
    key = config.get("INNERTUBE_API_KEY")
    return BrowseClient(api_key=key if isinstance(key, str) else "", context=context)


def initial_data(page: str) -> Any:
    """ytInitialData parsed as JSON, or None when the page has none or it does not parse."""
    match = _INITIAL_DATA_START.search(page)
    if match is None:
        return None
    try:
        if page.startswith("'", match.end()):
            literal = _JS_STRING.match(page, match.end())
            return json.loads(_js_unescape(literal.group(1))) if literal else None
        return _DECODER.raw_decode(page, match.end())[0]
    except ValueError:
        return None


def _js_unescape(text: str) -> str:
    """The value of a single-quoted JavaScript string literal's body (\\xHH, \\uHHHH and one-character escapes)."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) > 1:
            return chr(int(code[1:], 16))
        return _JS_SIMPLE_ESCAPES.get(code, code)

    return _JS_ESCAPE.sub(replace, text)


def _find(node: Any, key: str) -> Any:
    """The value under the first `key` met walking the JSON depth-first in document order, or None."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if key in current:
                return current[key]
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            stack.extend(reversed(current))
    return None
