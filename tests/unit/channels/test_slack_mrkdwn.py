"""to_mrkdwn and slack_sections: each markdown rule as Slack shows it, escaping, and Slack's size limits."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.channels.chat.slack_mrkdwn import RULE_LINE, SECTION_TEXT_LIMIT, slack_sections, to_mrkdwn
from tests.unit.channels.markdown_grammar import markdown, open_fence

PROPERTY = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# The links the converter makes: an http(s) or mailto target, then optionally `|` and a text without < or >.
OUR_LINK = re.compile(r"<(?:https?://|mailto:)[^\s<>|]+(?:\|[^<>]*)?>")


@pytest.mark.parametrize(("markdown_text", "expected"), [
    ("**bold** and __bold__", "*bold* and *bold*"),
    ("*italic* and _italic_", "_italic_ and _italic_"),
    ("~~struck~~", "~struck~"),
    ("***both***", "*_both_*"),
    ("**bold with *italic* inside**", "*bold with _italic_ inside*"),
    ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
    ("\\*not italic\\*", "*not italic*"),
])
def test_emphasis(markdown_text: str, expected: str) -> None:
    assert to_mrkdwn(markdown_text) == expected


@pytest.mark.parametrize(("markdown_text", "expected"), [
    ("[docs](https://docs.example.com/a?b=1&c=2)", "<https://docs.example.com/a?b=1&amp;c=2|docs>"),
    ("[mail](mailto:team@example.com)", "<mailto:team@example.com|mail>"),
    ("**see [the docs](https://d.example)**", "*see <https://d.example|the docs>*"),
    ("[wiki](https://en.example.org/wiki/Foo_(bar))", "<https://en.example.org/wiki/Foo_(bar)|wiki>"),
    ('[titled](https://t.example "A title")', "<https://t.example|titled>"),
    ("![a diagram](https://img.example/d.png)", "<https://img.example/d.png|a diagram>"),
    ("![](https://img.example/d.png)", "<https://img.example/d.png|https://img.example/d.png>"),
    ("<https://auto.example/x>", "<https://auto.example/x>"),
    ("[a|b>c](https://x.example)", "<https://x.example|a｜b&gt;c>"),
    ("[pipe](https://x.example/a|b)", "<https://x.example/a%7Cb|pipe>"),
])
def test_links(markdown_text: str, expected: str) -> None:
    assert to_mrkdwn(markdown_text) == expected


@pytest.mark.parametrize(("markdown_text", "expected"), [
    ("[click](javascript:alert(1))", "click"), ("[click](JAVASCRIPT:alert(1))", "click"),
    ("[rel](/relative/path)", "rel"), ("[data](data:text/html;base64,PHNjcmlwdD4=)", "data"),
    ("[file](file:///etc/passwd)", "file"), ("![x](javascript:alert(1))", "x"),
])
def test_only_web_and_mail_targets_become_links(markdown_text: str, expected: str) -> None:
    assert to_mrkdwn(markdown_text) == expected


def test_bare_urls_are_kept_with_the_sentence_punctuation_outside() -> None:
    out = to_mrkdwn("Read https://docs.example.com/a_b_c?x=1&y=2. Or (https://x.example/p).")
    assert out == "Read https://docs.example.com/a_b_c?x=1&amp;y=2. Or (https://x.example/p)."


@pytest.mark.parametrize("attack", [
    "<!channel>", "<!here|here>", "<!everyone>", "<@U123>", "<#C123|general>", "<!subteam^S123>",
    "<https://evil.example|a friendly label>", "<!date^1392734382^{date}|x>", "&lt;!channel&gt;",
])
def test_mentions_and_slack_links_in_text_are_neutralised(attack: str) -> None:
    for text in (attack, f"**{attack}**", f"- {attack}", f"> {attack}", f"# {attack}", f"| {attack} |\n|---|"):
        out = to_mrkdwn(text)
        assert "<" not in out and "&" not in out.replace("&amp;", "").replace("&lt;", "").replace("&gt;", ""), out


def test_injection_inside_code_and_link_text_is_escaped_too() -> None:
    assert to_mrkdwn("`<!channel>`") == "`&lt;!channel&gt;`"
    assert to_mrkdwn("```\n<@U123> & <!here>\n```") == "```\n&lt;@U123&gt; &amp; &lt;!here&gt;\n```"
    assert to_mrkdwn("[<!channel>](https://x.example)") == "<https://x.example|&lt;!channel&gt;>"


def test_headings_become_bold_lines() -> None:
    assert to_mrkdwn("# Title\n## **Already bold** ##\n###### Small `code`") == (
        "*Title*\n*Already bold*\n*Small `code`*")
    assert to_mrkdwn("#hashtag") == "#hashtag"


def test_bullets_nested_numbered_and_tasks() -> None:
    text = "- one\n  * two *it*\n    + three\n1. first\n2) second\n   - under\n- [ ] todo\n- [x] done"
    assert to_mrkdwn(text) == (
        "• one\n  • two _it_\n    • three\n1. first\n2) second\n   • under\n• ☐ todo\n• ☑ done")


def test_quotes_are_kept_and_their_content_converted() -> None:
    assert to_mrkdwn("> a **quote** & more\n>> nested") == "> a *quote* &amp; more\n> nested"


def test_horizontal_rules() -> None:
    assert to_mrkdwn("a\n\n---\n\n***\n\nb") == f"a\n\n{RULE_LINE}\n\n{RULE_LINE}\n\nb"


def test_fence_keeps_its_content_and_drops_the_language_tag() -> None:
    text = "```python\ndef f(x):\n    return x**2 < 3 and **kwargs  # *not* [a](https://l) | # no\n```"
    assert to_mrkdwn(text) == (
        "```\ndef f(x):\n    return x**2 &lt; 3 and **kwargs  # *not* [a](https://l) | # no\n```")


def test_code_that_looks_like_markdown_stays_untouched() -> None:
    code = "# heading?\n- bullet?\n> quote?\n| a | b |\n|---|---|\n~~strike~~ __init__ https://x.example/a_b\n  \t"
    assert to_mrkdwn(f"~~~\n{code}\n~~~") == f"```\n{code.replace('>', '&gt;')}\n```"
    assert to_mrkdwn("Call `**kwargs` or `a_b_c` then `[x](y)`") == "Call `**kwargs` or `a_b_c` then `[x](y)`"


def test_fences_in_list_items_lose_the_item_indentation_only() -> None:
    assert to_mrkdwn("1. Run:\n   ```bash\n   pip install x\n     --upgrade\n   ```") == (
        "1. Run:\n```\npip install x\n  --upgrade\n```")


def test_backtick_runs_inside_code_cannot_close_slack_block() -> None:
    out = to_mrkdwn("~~~\n```\nnested\n```\n~~~")
    assert out == "```\n`\u200b`\u200b`\nnested\n`\u200b`\u200b`\n```"


def test_an_unclosed_fence_is_closed() -> None:
    assert to_mrkdwn("text\n```js\nlet a = 1") == "text\n```\nlet a = 1\n```"


def test_a_table_becomes_an_aligned_code_block() -> None:
    text = ("| Name | Value | Note |\n|:-----|------:|:----:|\n"
            "| `retry` | 3 | **yes** |\n| countdown | 120 | [doc](https://d.example) |")
    assert to_mrkdwn(text) == "\n".join([
        "```",
        "Name      | Value |          Note",
        "----------+-------+------------------------",
        "retry     |     3 |           yes",
        "countdown |   120 | doc (https://d.example)",
        "```",
    ])


def test_table_cells_with_pipes_in_code_wide_characters_and_escaping() -> None:
    text = "| a | b |\n|---|---|\n| `x|y` | 日本 |\n| a\\|b | <b> & |"
    assert to_mrkdwn(text) == "```\na   | b\n----+------\nx|y | 日本\na|b | &lt;b&gt; &amp;\n```"


def test_citation_markers_stay_as_they_are() -> None:
    assert to_mrkdwn("Retries are bounded [1]. Brokers vary [2][3].") == (
        "Retries are bounded [1]. Brokers vary [2][3].")


def test_sections_split_long_answers_within_the_section_limit() -> None:
    text = "Intro.\n\n```python\n" + "\n".join(f"print({i})  # <{i}>" for i in range(400)) + "\n```\n\nDone."
    sections = slack_sections(text)
    assert len(sections) > 1 and all(len(section) <= SECTION_TEXT_LIMIT for section in sections)
    assert all(open_fence(section) is None for section in sections)
    assert sections[1].startswith("```\n")
    assert slack_sections("") == []


def _assert_slack_safe(section: str) -> None:
    rest = OUR_LINK.sub("", section)
    assert "<" not in rest, section
    assert "&" not in re.sub(r"&(?:amp|lt|gt);", "", rest), section
    assert all(">" not in line.removeprefix("> ") for line in rest.split("\n")), section


@given(markdown, st.sampled_from([SECTION_TEXT_LIMIT, 200, 700]))
@PROPERTY
def test_any_markdown_gives_slack_safe_sections_within_the_limit(text: str, limit: int) -> None:
    sections = slack_sections(text, limit)
    for section in sections:
        assert 0 < len(section) <= min(limit, SECTION_TEXT_LIMIT) and section.strip()
        assert open_fence(section) is None, section
        _assert_slack_safe(section)
    assert (not sections) == (not to_mrkdwn(text).strip())
