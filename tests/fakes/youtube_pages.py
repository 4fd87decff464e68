"""The fake YouTube's data model and the pages and payloads it answers with (watch pages, captions, oEmbed)."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode
from xml.sax.saxutils import escape as xml_escape

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
PlaylistLayout = Literal[
    "innertube",  # ytcfg + ytInitialData with playlistVideoListRenderer and continuation tokens, as YouTube serves it
    "no_ytcfg",  # the same ytInitialData, but the page has no ytcfg (no API key or client context)
    "unknown",  # items as lockupViewModels in a grid our parser does not know (the regex fallback's case)
]
BrowseState = Literal[
    "ok",  # continuation answers as YouTube sends them
    "unavailable",  # HTTP 503
    "rate_limited",  # HTTP 429
    "refused",  # HTTP 403
    "garbage",  # HTTP 200 with an HTML body instead of JSON
]
UNPLAYABLE: dict[str, tuple[str, str]] = {
    "private": ("LOGIN_REQUIRED", "This video is private"),
    "age_restricted": ("LOGIN_REQUIRED", "This video may be inappropriate for some users."),
    "bot_check": ("LOGIN_REQUIRED", BOT_CHECK_REASON),
    "members_only": ("UNPLAYABLE", MEMBERS_ONLY_REASON),
    "unavailable": ("ERROR", "This video is unavailable"),
}
LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "nl": "Dutch"}
RECAPTCHA_PAGE = """<!DOCTYPE html><html><head><title>YouTube</title>
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
        language = self.name or LANGUAGE_NAMES.get(self.language, self.language)
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
    page_size: int = 100
    """Videos on the page and in each continuation answer (YouTube: 100)."""
    layout: PlaylistLayout = "innertube"
    browse: BrowseState = "ok"


def google_error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "errors": [{"message": message, "reason": "badRequest"}],
                      "status": status}}


def watch_page(video_id: str, title: str) -> str:
    config = {"INNERTUBE_API_KEY": FAKE_INNERTUBE_API_KEY, "INNERTUBE_CLIENT_NAME": "WEB",
              "INNERTUBE_CLIENT_VERSION": "2.20250101.00.00", "VISITOR_DATA": "CgtGYWtlVmlzaXRvcg%3D%3D"}
    player = {"videoDetails": {"videoId": video_id, "title": title}}
    return (f'<!DOCTYPE html><html lang="en"><head><title>{html.escape(title)} - YouTube</title>'
            f'<script nonce="fake">ytcfg.set({script_json(config)});</script></head><body><div id="player"></div>'
            f'<script nonce="fake">var ytInitialPlayerResponse = {script_json(player)};</script></body></html>')


def consent_page(video_id: str) -> str:
    return ('<!DOCTYPE html><html><body><p>Before you continue to YouTube</p>'
            '<form action="https://consent.youtube.com/s" method="POST">'
            f'<input type="hidden" name="continue" value="https://www.youtube.com/watch?v={video_id}">'
            '<input type="hidden" name="v" value="cb.20210328-17-p0.de+FX+119">'
            '<button type="submit">Accept all</button></form></body></html>')


def caption_track(video_id: str, track: FakeTrack, *, po_token: bool) -> dict[str, Any]:
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


def cue_html(track: FakeTrack, text: str) -> str:
    # YouTube stores captions as HTML (&#39; for apostrophes) and then XML-escapes that into the timedtext file.
    return text if track.raw else html.escape(text).replace("&#x27;", "&#39;")


def durations(cues: tuple[tuple[float, str], ...]) -> list[float]:
    starts = [start for start, _ in cues]
    ends = [*starts[1:], starts[-1] + 2.0] if starts else []
    return [max(end - start, 0.01) for start, end in zip(starts, ends, strict=True)]


def timedtext_xml(track: FakeTrack) -> str:
    lines = [f'<text start="{start:g}" dur="{duration:.3f}">{xml_escape(cue_html(track, text))}</text>'
             for (start, text), duration in zip(track.cues, durations(track.cues), strict=True)]
    return '<?xml version="1.0" encoding="utf-8" ?><transcript>' + "".join(lines) + "</transcript>"


def srv3_xml(track: FakeTrack) -> str:
    lines = [f'<p t="{int(start * 1000)}" d="{int(duration * 1000)}">{xml_escape(cue_html(track, text))}</p>'
             for (start, text), duration in zip(track.cues, durations(track.cues), strict=True)]
    body = "".join(lines)
    return f'<?xml version="1.0" encoding="utf-8" ?><timedtext format="3"><body>{body}</body></timedtext>'


def oembed_payload(video: FakeVideo) -> dict[str, Any]:
    return {
        "title": video.title, "author_name": video.author, "author_url": "https://www.youtube.com/@openguru-test",
        "type": "video", "height": 113, "width": 200, "version": "1.0", "provider_name": "YouTube",
        "provider_url": "https://www.youtube.com/", "thumbnail_height": 360, "thumbnail_width": 480,
        "thumbnail_url": f"https://i.ytimg.com/vi/{video.video_id}/hqdefault.jpg",
        "html": f'<iframe width="200" height="113" src="https://www.youtube.com/embed/{video.video_id}?feature=oembed"'
                ' frameborder="0" allowfullscreen></iframe>',
    }


def script_json(payload: Any) -> str:
    # Inside <script>, "</" would end the element early; YouTube escapes it the same way.
    return json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
