"""neutralise(): no live tag or script link as a CommonMark parser sees it, idempotent, same when streamed."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.adapters.llm.fake import ReplyScript, ScriptedChatModel, ScriptedReply
from backend.pipeline.answer_types import Turn, UnderstandRequest
from backend.pipeline.answerer_llm import LLMAnswerer
from backend.pipeline.sanitize import ZWSP, StreamNeutraliser, neutralise, neutralise_with_offsets, safe_link
from backend.pipeline.understanding import understand_by_rules
from tests.support.markdown_safety import live_html, script_links

# Pieces that build tags, fences, code spans, links and obfuscated schemes when strung together.
PIECES = [
    "<", ">", "/", "!", "?", "!--", "img", "script", " src=x onerror=alert(1)", " ", "  ", "   ", "    ", "\t",
    "\n", "\r", "\r\n", "\n\n", "`", "``", "```", "~~~", "````", "[x](", "![i](", ")", "]", "[r]: ", "- ", "> ",
    "1. ", "javascript", "JaVaScRiPt", "vbscript", "data", "file", ":", "&colon;", "&#58;", "&#x3A;", "\\:",
    "&Tab;", "&#9;", "&#x0a;", "&#106;", "&#X6A;", "java", "script:", "&#32", "<https://", "http://x", "a", "b",
    "&lt;", "&", ";", "#", "\\", "\u200b", "*", "_", "|", "<!DOCTYPE", "<?php", "</", "<![CDATA[", "=", '"', "'",
]
hostile = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "</p><svg/onload=alert(1)>",
    "<!-- hidden --><b>bold</b>",
    "[click](javascript:alert(1))",
    "[click](JAVASCRIPT:alert(1))",
    "[click](java&#115;cript:alert(1))",
    "[click](javascript&colon;alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](java&Tab;script:alert(1))",
    "[click](javascript\\:alert(1))",
    "[click](<javascript:alert(1)>)",
    "[click](<\tjavascript:alert(1)>)",
    "![x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](vbscript:msgbox(1)) [y](file:///etc/passwd)",
    "<javascript:alert(1)>",
    "[ref]: javascript:alert(1)\n\n[go][ref]",
    "- item\n  ```\n  code\n- <img src=x onerror=alert(1)>",
    "```\r<img src=x onerror=alert(1)>\r```\r<img src=x onerror=alert(1)>",
    "`a\nb `<img src=x onerror=1>` c`",
    "\\`<img src=x onerror=1>`",
    "``` a`b\n<img src=x onerror=1>\n```",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_known_attacks_are_defused(text: str) -> None:
    out = neutralise(text)
    assert live_html(out) == [] and script_links(out) == []
    assert live_html(text) or script_links(text), "the input itself should be an attack"


# Not attacks as written, but a scanner that read them differently from a renderer would leave a live tag.
TRAPS = ["```\n```\u00a0\n<img src=x onerror=1>\n```", "```\n   ```\n<img src=x onerror=1>", "```\n\t```\n<b>x</b>"]


@pytest.mark.parametrize("text", TRAPS)
def test_scanner_reads_fences_as_a_renderer_does(text: str) -> None:
    out = neutralise(text)
    assert live_html(out) == [] and script_links(out) == []


@given(hostile)
@FAST
def test_output_never_has_a_live_tag_or_script_link(text: str) -> None:
    out = neutralise(text)
    assert live_html(out) == [], out
    assert script_links(out) == [], out


@given(hostile)
@FAST
def test_idempotent(text: str) -> None:
    once = neutralise(text)
    assert neutralise(once) == once


@given(hostile, st.lists(st.integers(min_value=0, max_value=400), max_size=12))
@FAST
def test_streaming_equals_batch_for_any_split(text: str, cuts: list[int]) -> None:
    stream, out, last = StreamNeutraliser(), [], 0
    for cut in sorted({min(c, len(text)) for c in cuts}) + [len(text)]:
        out.append(stream.feed(text[last:cut]))
        last = cut
    out.append(stream.finish())
    assert "".join(out) == neutralise(text)


def test_streaming_holds_back_only_the_last_word() -> None:
    stream = StreamNeutraliser()
    assert stream.feed("Use the <") == "Use the"
    assert stream.feed("img> tag") == " <" + ZWSP + "img>"
    assert stream.finish() == " tag"


def test_fenced_code_is_kept_verbatim_and_inline_code_reads_the_same() -> None:
    text = "Write `List<String>` or:\n\n```html\n<a href=\"javascript:void(0)\">x</a>\n```\nthe <b> tag"
    out = neutralise(text)
    assert '```html\n<a href="javascript:void(0)">x</a>\n```' in out
    assert out.replace(ZWSP, "") == text  # nothing visible changed, only zero-width marks were added


def test_prose_words_followed_by_a_colon_stay_readable() -> None:
    text = "The metadata: and the data: fields; see profile: page"
    assert neutralise(text).replace(ZWSP, "") == text
    assert neutralise("https://example.com/a:b <https://example.com>").replace(ZWSP, "") == (
        "https://example.com/a:b <https://example.com>"
    )


def test_offsets_follow_the_inserted_marks() -> None:
    text = "intro <b> then\r\nmore <i> end"
    out, (at_then, at_more) = neutralise_with_offsets(text, [text.index("then"), text.index("more")])
    assert out[at_then:].startswith("then") and out[at_more:].startswith("more")


@given(hostile, st.lists(st.integers(min_value=0, max_value=400), max_size=5))
@FAST
def test_offsets_land_after_the_same_text(text: str, offsets: list[int]) -> None:
    offsets = [min(o, len(text)) for o in offsets]
    out, mapped = neutralise_with_offsets(text, offsets)
    for offset, landed in zip(offsets, mapped, strict=True):
        if text[offset - 1 : offset] != "\r":  # a "\r" of "\r\n" has no place of its own in the result
            before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
            assert out[:landed].replace(ZWSP, "") == before.replace(ZWSP, "")


@pytest.mark.parametrize(("url", "kept"), [
    ("https://docs.example.com/a?b=1#c", True), ("http://x.test/", True), ("javascript:alert(1)", False),
    (" JavaScript:alert(1)", False), ("data:text/html,1", False), ("file:///etc/passwd", False), ("", False),
    ("https://x.test/\"onmouseover=1", False), ("//evil.test/", False), ("/sources/3/file#page=2", True),
    ("/\\evil.test", False), ("https:evil", False),
])
def test_safe_link(url: str, kept: bool) -> None:
    assert bool(safe_link(url)) is kept
    assert safe_link(url) in ("", url.strip())


def test_big_text_is_fast() -> None:
    text = ("Some prose with a <tag> and [link](javascript:x) and metadata: values.\n" * 20_000)
    started = time.perf_counter()
    out = neutralise(text)
    assert time.perf_counter() - started < 5
    assert not re.search(r"<[a-z]", out)


def test_the_models_small_talk_reply_and_question_title_are_neutralised() -> None:
    reply = ScriptedReply(json={
        "prettified": "Why <script>alert(1)</script>?", "intent": "chitchat", "answer_length": "short",
        "in_scope": False, "retrieval_query": "x", "reply": "Hi! [me](javascript:alert(1)) <img src=x onerror=1>",
    })
    chat = ScriptedChatModel(ReplyScript().push(reply))
    request = UnderstandRequest("and then?", "G", "Celery", (Turn("What is Celery?", "A task queue."),))
    understanding, _ = LLMAnswerer(chat).understand(request)
    for text in (understanding.reply, understanding.prettified):
        assert live_html(text) == [] and script_links(text) == []


def test_rule_based_greetings_neutralise_the_guru_name() -> None:
    understanding = understand_by_rules(UnderstandRequest("hello", "<img src=x onerror=1>", "Celery"))
    assert understanding.reply and live_html(understanding.reply) == []
