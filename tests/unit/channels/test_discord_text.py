"""Discord chat text: links that make no embed, no pings, 2,000-character parts with fences balanced, footer."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.channels.chat.discord_text import (
    DISCORD_LIMIT,
    answer_parts,
    footer_text,
    preview,
    suppress_embeds,
    thread_name,
    to_discord,
)
from backend.channels.chat.footer import error_text
from tests.unit.channels import markdown_grammar as grammar
from tests.unit.channels.markdown_grammar import closes, markdown, open_fence

PROPERTY = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_SPAN = re.compile(r"(`+)[^`].*?(?<!`)\1(?!`)|(`+)(?<!`)[^`]\2(?!`)")  # this test's own reading of code spans
_URL_START = re.compile(r"https?://(?=[^\s<>])", re.IGNORECASE)  # "https://" alone links nothing
_PING = re.compile(r"@(?:everyone|here)|<(?:@[!&]?|#)\d+>", re.IGNORECASE)
SITE = "https://guru.example"


def _absolute(link: str) -> str:
    return SITE + link if link.startswith("/") else link


def _text_lines(part: str) -> list[str]:
    """The lines of `part` outside code blocks, with inline code spans taken out."""
    lines, opener = [], None
    for line in part.split("\n"):
        if opener is not None:
            opener = None if closes(line, opener) else opener
        elif (opened := open_fence(line)) is not None:
            opener = opened
        else:
            lines.append(_SPAN.sub("", line))
    return lines


def _code_text(parts: list[str]) -> str:
    """The characters inside code blocks, read part by part, less fence lines and all whitespace."""
    code: list[str] = []
    for part in parts:
        opener = None
        for line in part.split("\n"):
            if opener is not None:
                if closes(line, opener):
                    opener = None
                else:
                    code.append(line)
            else:
                opener = open_fence(line)
    # Discord ends a block at any ``` run, so the converter breaks runs inside code with zero-width spaces.
    return re.sub(r"\s|[\u200b\ue000-\ue00f]", "", "".join(code))


def _unwrapped_urls(part: str) -> list[str]:
    """URLs outside code that Discord would preview: every one must sit inside <…>."""
    found = []
    for line in _text_lines(part):
        for match in _URL_START.finditer(line):
            end = re.compile(r"[^\s<>]*").match(line, match.end())
            if match.start() == 0 or line[match.start() - 1] != "<" or end is None or not line.startswith(
                    ">", end.end()):
                found.append(line)
    return found


# --- links and embeds ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("See https://docs.example.com/tasks.", "See <https://docs.example.com/tasks>."),
    ("(https://a.example/x), then", "(<https://a.example/x>), then"),
    ("https://en.example.org/wiki/Foo_(bar), ok", "<https://en.example.org/wiki/Foo_(bar)>, ok"),
    ("**https://b.example**!", "**<https://b.example>**!"),
    ("[docs](https://d.example/p)", "[docs](<https://d.example/p>)"),
    ('[titled](https://t.example "A title")', "[titled](<https://t.example>)"),
    ("[spaced](<https://s.example/a b>)", "[spaced](<https://s.example/a%20b>)"),
    ("![a diagram](https://img.example/d.png)", "[a diagram](<https://img.example/d.png>)"),
    ("![](https://img.example/d.png)", "<https://img.example/d.png>"),
    ("<https://already.example>", "<https://already.example>"),
    ("[bad](javascript:alert(1))", "bad"),
    ("[relative](/docs/page)", "relative"),
    ("[https://x.example](https://x.example)", "<https://x.example>"),
    ("[mail us](mailto:team@example.com)", "mail us (team@example.com)"),
])
def test_links_are_wrapped_so_discord_makes_no_embed(text: str, expected: str) -> None:
    assert suppress_embeds(text) == expected


def test_urls_in_code_are_left_as_written() -> None:
    text = "Run `curl https://api.example/v1` or:\n```bash\ncurl https://api.example/v2\n```\nthen https://x.example"
    assert suppress_embeds(text) == (
        "Run `curl https://api.example/v1` or:\n```bash\ncurl https://api.example/v2\n```\nthen <https://x.example>")
    assert to_discord(text).split("\n")[2] == "curl https://api.example/v2"


@pytest.mark.parametrize(("text", "expected"), [
    ("@everyone look", "@\u200beveryone look"),
    ("ping @here now", "ping @\u200bhere now"),
    ("user <@123>, nick <@!45>, role <@&67>, channel <#89>",
     "user <\u200b@123>, nick <\u200b@!45>, role <\u200b@&67>, channel <\u200b#89>"),
    ("\\@everyone", "\\@\u200beveryone"),
    ("[@everyone](https://e.example)", "[@\u200beveryone](<https://e.example>)"),
])
def test_mentions_from_the_model_or_a_source_never_ping(text: str, expected: str) -> None:
    assert suppress_embeds(text) == expected
    assert not _PING.search(to_discord(text))


def test_mentions_in_code_stay_verbatim() -> None:
    assert suppress_embeds("`@everyone` and <@U1>") == "`@everyone` and <@U1>"


# --- markdown Discord does not render -----------------------------------------------------------------------

def test_a_table_becomes_an_aligned_code_block() -> None:
    text = "Options:\n\n| name | default |\n|---|--:|\n| `retries` | 3 |\n| [delay](https://d.example) | 180 |\n\nDone."
    assert to_discord(text) == ("Options:\n\n```\nname                      | default\n"
                                "--------------------------+--------\n"
                                "retries                   |       3\n"
                                "delay (https://d.example) |     180\n```\n\nDone.")


def test_deep_headings_become_bold_lines_and_shallow_ones_stay() -> None:
    assert to_discord("# One\n## Two\n### Three\n#### Four **bold**\n###### Six ##") == (
        "# One\n## Two\n### Three\n**Four bold**\n**Six**")


def test_fences_become_discord_fences_with_a_bare_language() -> None:
    text = "~~~python title=demo.py\nprint('```')\n~~~\n\n````\n```\n````"
    assert to_discord(text) == "```python\nprint('`\u200b`\u200b`')\n```\n\n```\n`\u200b`\u200b`\n```"


def test_other_markdown_passes_through() -> None:
    text = "**bold** *it* ~~gone~~ __under__\n- item\n  1. nested\n> quote\n`code`"
    assert to_discord(text) == text


# --- splitting ----------------------------------------------------------------------------------------------

def test_a_long_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"value_{i} = compute({i})  # step {i}" for i in range(200))
    parts = answer_parts("Intro.\n\n```python\n" + code + "\n```\n\nAfter.", "FOOTER")
    assert len(parts) > 2 and all(len(part) <= DISCORD_LIMIT for part in parts)
    for part in parts[1:-1]:
        assert part.startswith("```python\n") and part.endswith("\n```")
    assert parts[-1].endswith("After.\n\nFOOTER")


def test_the_footer_gets_its_own_message_rather_than_being_cut() -> None:
    answer, footer = "word " * 390, "**Sources**\n" + "[1] a source title\n" * 20
    parts = answer_parts(answer, footer)
    assert parts[-1] == footer.strip() and len(parts) == 2


def test_no_empty_parts() -> None:
    assert answer_parts("", "") == []
    assert answer_parts("  \n\n", "footer") == ["footer"]
    assert answer_parts("answer", "") == ["answer"]


def test_preview_closes_an_open_block_and_marks_more_to_come() -> None:
    assert preview("Try:\n```py\nx = 1") == ["Try:\n```py\nx = 1\n```\n…"]
    assert preview("Halfway through a sentence") == ["Halfway through a sentence …"]
    assert preview("") == ["…"]


def test_preview_keeps_earlier_parts_as_the_answer_grows() -> None:
    answer = "\n\n".join(f"Paragraph {i}: " + "some words about tasks " * 12 for i in range(40))
    answer += "\n\n```python\n" + "\n".join(f"line_{i} = {i}" for i in range(300)) + "\n```\nDone."
    earlier = preview(answer[:3000])
    for size in range(3000, len(answer), 700):
        later = preview(answer[:size])
        assert all(len(part) <= DISCORD_LIMIT for part in later)
        settled = max(0, len(earlier) - 2)
        assert later[:settled] == earlier[:settled]
        earlier = later


# --- footer, thread name, error -----------------------------------------------------------------------------

REFERENCES: list[dict[str, Any]] = [
    {"n": 1, "title": "Tasks [guide] *retry* `x`", "link": "/s/1", "cited": True},
    {"n": 2, "title": "Internal wiki page", "link": "", "cited": True},
    {"n": 3, "title": "Never cited", "link": "https://n.example", "cited": False},
]


def test_footer_lists_cited_sources_escaped_private_ones_without_link() -> None:
    footer = footer_text(trust=0.82, refused=False, references=REFERENCES, answer_url=SITE + "/a/7",
                         guru_name="Celery", absolute=_absolute)
    assert footer == ("**Sources**\n[1] [Tasks \\[guide\\] \\*retry\\* \\`x\\`](<https://guru.example/s/1>)\n"
                      "[2] Internal wiki page\n"
                      "🟢 Trust 82% · [View this answer on the web](<https://guru.example/a/7>)")


def test_footer_of_a_refusal_says_so_and_shows_no_trust() -> None:
    footer = footer_text(trust=0.2, refused=True, references=REFERENCES, answer_url=SITE + "/a/8",
                         guru_name="my_guru", absolute=_absolute)
    assert footer == ("ℹ️ Not answered: my\\_guru's sources do not cover this question. · "
                      "[View this answer on the web](<https://guru.example/a/8>)")


def test_footer_titles_are_bounded_and_cannot_ping_or_link() -> None:
    refs = [{"n": 1, "title": "@everyone https://evil.example " + "long " * 60, "link": "", "cited": False}]
    footer = footer_text(trust=None, refused=False, references=refs, answer_url="", guru_name="g", absolute=_absolute)
    line = footer.split("\n")[1]
    assert len(line) < 170 and line.endswith("…") and not _PING.search(line) and not _unwrapped_urls(line)
    assert "Trust" not in footer


@pytest.mark.parametrize(("question", "expected"), [
    ("<@1234> how do I   retry\n a task?", "how do I retry a task?"),
    ("@everyone <#55> <@&9> what", "what"),
    ("<@1234>", "Question"),
    ("   ", "Question"),
])
def test_thread_name(question: str, expected: str) -> None:
    assert thread_name(question) == expected


def test_a_long_question_names_its_thread_in_100_characters_at_a_word() -> None:
    name = thread_name("why " * 20 + "supercalifragilistic " * 5)
    assert len(name) <= 100 and name.endswith("…") and name[:-1].split(" ")[-1] in ("why", "supercalifragilistic")


def test_error_text() -> None:
    assert error_text("the model timed out", "ab12") == (
        "Sorry, I could not answer this: the model timed out (error id ab12)")
    assert error_text("no model", "") == "Sorry, I could not answer this: no model"


# --- properties ---------------------------------------------------------------------------------------------

reference = st.fixed_dictionaries({
    "n": st.integers(1, 20), "title": grammar.sentence, "cited": st.booleans(),
    "link": st.sampled_from(["", "/s/1", "https://docs.example.com/a_(b)", "javascript:x"])})
footers = st.builds(lambda refs, trust, refused: footer_text(
    trust=trust, refused=refused, references=refs, answer_url=SITE + "/a/1", guru_name="Guru", absolute=_absolute),
    st.lists(reference, max_size=10), st.none() | st.floats(0, 1), st.booleans())
# Without tables, every code line of the output is a code line of the answer (tables become code blocks).
no_tables = st.builds(lambda blocks: "\n\n".join(blocks), st.lists(st.one_of(
    grammar.paragraph, grammar.fence(), grammar.bullets(), grammar.heading, grammar.long_line, grammar.long_word),
    min_size=1, max_size=10))


def _check_parts(parts: list[str], limit: int) -> None:
    for part in parts:
        assert part.strip() and len(part) <= limit, (len(part), part[:80])
        assert open_fence(part) is None, part
        assert not _unwrapped_urls(part), _unwrapped_urls(part)
        assert not any(_PING.search(line) for line in _text_lines(part)), part


@given(markdown, footers)
@PROPERTY
def test_any_answer_gives_valid_discord_messages_with_the_footer_whole_at_the_end(text: str, footer: str) -> None:
    parts = answer_parts(text, footer)
    _check_parts(parts, DISCORD_LIMIT)
    assert parts[-1].endswith(footer) if len(footer) <= DISCORD_LIMIT else parts[-1] in footer


@given(no_tables, st.sampled_from([DISCORD_LIMIT, 1000]))
@PROPERTY
def test_code_is_preserved_across_the_parts(text: str, limit: int) -> None:
    parts = answer_parts(text, "", limit)
    _check_parts(parts, limit)
    assert _code_text(parts) == re.sub(r"\s|[\u200b\ue000-\ue00f]", "", "".join(_code_lines(text)))


@given(markdown, st.integers(1, 30))
@PROPERTY
def test_previews_are_valid_messages(text: str, cut: int) -> None:
    _check_parts(preview(text[: len(text) * cut // 30]), DISCORD_LIMIT)


@given(no_tables, st.integers(0, 100), st.integers(1, 100))
@PROPERTY
def test_a_preview_part_followed_by_two_more_stays_as_it_was(text: str, start: int, more: int) -> None:
    # Only the last two parts may still change: the last grows, and the one before it ends at a cut that
    # more text can move (a line break that becomes a blank line, a URL or link still being written).
    shorter = len(text) * start // 100
    earlier, later = preview(text[:shorter]), preview(text[: shorter + len(text) * more // 100])
    settled = max(0, len(earlier) - 2)
    assert later[:settled] == earlier[:settled]


def _code_lines(text: str) -> list[str]:
    """The code lines of the answer as written (fence lines excluded)."""
    code, opener = [], None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if opener is not None:
            if closes(line, opener):
                opener = None
            else:
                code.append(line)
        else:
            opener = open_fence(line)
    return code
