"""split_message: parts within the limit, cut at natural breaks, code fences closed and reopened, nothing lost."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.channels.chat.split import MIN_LIMIT, split_message
from tests.unit.channels.markdown_grammar import closes, markdown, open_fence

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _start_after_whitespace(original: str, pos: int, body: str) -> int | None:
    """Where `body` starts in `original` if only whitespace lies between `pos` and there."""
    while True:
        if original.startswith(body, pos):
            return pos
        if pos >= len(original) or not original[pos].isspace():
            return None
        pos += 1


def _consumes(original: str, parts: list[str], index: int = 0, pos: int = 0) -> bool:
    """Whether the parts, less fence lines added at their edges, are `original` in order, gaps only whitespace.

    A first line may be an added reopening only if it is the opening line of the fence open in `original`
    there; a last line may be an added closing only if it closes the fence open in `original` there.
    """
    if index == len(parts):
        return not original[pos:].strip()
    lines = parts[index].split("\n")
    for lead in (0, 1):
        for trail in (0, 1):
            if lead + trail >= len(lines):
                continue
            body = "\n".join(lines[lead : len(lines) - trail])
            start = _start_after_whitespace(original, pos, body)
            if start is None or (lead and lines[0] != open_fence(original[:start])):
                continue
            end = start + len(body)
            opener = open_fence(original[:end])
            if trail and (opener is None or not closes(lines[-1], opener)):
                continue
            if _consumes(original, parts, index + 1, end):
                return True
    return False


def _check(text: str, limit: int) -> list[str]:
    parts = split_message(text, limit)
    for part in parts:
        assert len(part) <= limit, (len(part), part)
        assert part.strip(), parts
        assert open_fence(part) is None, part
    assert _consumes(text, parts), parts
    return parts


def test_short_text_is_one_part_and_blank_text_none() -> None:
    assert split_message("  hello  ", 200) == ["  hello"]
    assert split_message(" \n\n \n", 200) == []


def test_limit_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        split_message("text", MIN_LIMIT - 1)


def test_cuts_at_a_blank_line_before_a_line_break() -> None:
    first = "a" * 120 + "\n\n" + "b" * 60
    text = first + "\nccc\n" + "d" * 150
    parts = _check(text, 200)
    assert parts[0] == "a" * 120 and parts[1].startswith("b" * 60)


def test_cuts_at_a_line_break_before_a_space() -> None:
    text = "word " * 25 + "\n" + "more words " * 10
    assert _check(text, 200)[0] == ("word " * 25).rstrip()


def test_cuts_at_a_space_before_cutting_a_word() -> None:
    parts = _check("lorem ipsum " * 40, 200)
    assert all(part.endswith(("lorem", "ipsum")) for part in parts)


def test_a_word_longer_than_a_part_is_cut() -> None:
    parts = _check("short " + "x" * 450 + " end", 200)
    assert parts[0] == "short" and parts[1] == "x" * 200 and parts[2] == "x" * 200


def test_a_cut_inside_a_fence_closes_and_reopens_it_with_its_tag() -> None:
    code = "\n".join(f"value_{i} = compute({i})" for i in range(30))
    parts = _check("Intro.\n\n```python\n" + code + "\n```\n\nAfter.", 250)
    assert len(parts) > 2
    for part in parts[1:-1]:
        assert part.startswith("```python\n") and part.endswith("\n```")


def test_tilde_fences_and_long_markers_reopen_the_same_way() -> None:
    code = "\n".join("~~~ not a closer ~~~ " + str(i) for i in range(20))
    parts = _check("~~~~ text\n" + code + "\n~~~~", 200)
    assert all(part.startswith("~~~~ text\n") and part.endswith("\n~~~~") for part in parts)


def test_an_unclosed_fence_is_closed_in_the_last_part() -> None:
    parts = _check("```\n" + "line of code\n" * 40, 200)
    assert parts[-1].endswith("\n```")


def test_no_part_starts_or_ends_with_an_empty_block() -> None:
    text = "p" * 150 + "\n```sh\n" + "echo hi\n" * 30 + "```"
    for part in _check(text, 200):
        assert not re.search(r"^```sh\n```$", part, re.MULTILINE)


def test_a_space_cut_never_makes_a_fence_out_of_half_a_line() -> None:
    # Cut at the space before it, the next part would start with a fence opening ("```python and …").
    text = "a" * 150 + " ```python" + "_" * 100 + " tail"
    for part in _check(text, 200):
        assert not part.startswith("```")


def test_a_marker_too_wide_to_repeat_is_left_as_text() -> None:
    # Its opening and closing lines alone would fill a part: the splitter neither reopens nor closes it.
    text = "~" * 100 + "\n" + "code line\n" * 30
    parts = split_message(text, 200)
    assert all(len(part) <= 200 for part in parts) and not parts[1].startswith("~")


def test_atomic_spans_are_not_cut_inside() -> None:
    link = "<https://docs.example.com/page|read the documentation page>"
    text = "see " * 40 + link + " tail"
    parts = split_message(text, 200, atomic=re.compile(r"<[^<>\n]*>"))
    assert any(link in part for part in parts)


def test_emoji_and_combining_marks_are_not_split_by_a_hard_cut() -> None:
    family = "👨‍👩‍👧"
    parts = _check(family * 120, 200)
    assert all(not part.startswith("\u200d") and not part.endswith("\u200d") for part in parts)
    accented = _check("e\u0301" * 300, 200)
    assert all(not part.startswith("\u0301") for part in accented)


@given(markdown, st.integers(MIN_LIMIT, 1200))
@PROPERTY
def test_any_markdown_splits_within_the_limit_fences_balanced_nothing_lost(text: str, limit: int) -> None:
    _check(text, limit)
