"""Hypothesis strategies for markdown as answers are written, and a fence reader independent of the code."""

from __future__ import annotations

import re

from hypothesis import strategies as st

WORDS = ["the", "task", "retry", "naïve", "café", "日本語", "데이터", "👍", "👍🏽", "👨‍👩‍👧", "e\u0301", "x_y", "a*b",
         "&", "<!channel>", "<@U123>", "<https://evil.example|click>", "<script>", "[1]", "[2][3]", "|", "\\*",
         "`", "~", "https://docs.example.com/a_b?x=1&y=2", "(note)", "»", "—", "ﬁ"]
SPANS = ["**bold**", "__bold__", "*it*", "_it_", "~~gone~~", "`x < y && z`", "`**no**`", "[docs](https://d.example/p)",
         "[bad](javascript:alert(1))", "![logo](https://i.example/l.png)", "**see [a](https://a.example)**",
         "<https://auto.example>", "[a|b>c](https://x.example)", "***both***", "``a ` b``",
         "[the retry section of the docs](https://docs.example.com/tasks#retry)", "[a & b](mailto:a@b.example)"]
TAGS = ["", "python", "bash", "js", "c++", "text title=x"]
CODE_LINES = ["x = 1", "if a < b and c > d:", "    return **kwargs", "# not a heading", "- not a bullet",
              "| a | b |", "<!here> & <@U1>", "", "    ", "~~~", "`inline`", "print('日本語 👍')"]

word = st.sampled_from(WORDS) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                                        min_size=1, max_size=12).filter(lambda w: not w.isspace())
sentence = st.lists(word | st.sampled_from(SPANS), min_size=1, max_size=30).map(" ".join)
paragraph = st.lists(sentence, min_size=1, max_size=4).map(" ".join)
long_line = st.lists(word, min_size=50, max_size=400).map(" ".join)
# Tildes and backticks alternate with a letter: any piece of a long run of them is a fence line, so no cut in
# a run longer than a part can keep it text (split_message's docstring says so).
long_word = st.builds(lambda piece, size: piece * size,
                      st.sampled_from(["x", "日", "👍", "a~", "`a", "e\u0301", "<&>"]), st.integers(100, 1500))


@st.composite
def fence(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["```", "````", "~~~", "~~~~"]))
    indent = draw(st.sampled_from(["", "", "  ", "   "]))
    body = draw(st.lists(st.sampled_from(CODE_LINES) | long_line | sentence, max_size=60))
    closed = draw(st.booleans() | st.just(True))
    lines = [indent + marker + draw(st.sampled_from(TAGS)), *(indent + line for line in body)]
    return "\n".join([*lines, indent + marker] if closed else lines)


@st.composite
def bullets(draw: st.DrawFn) -> str:
    items = draw(st.lists(st.tuples(st.integers(0, 3), st.sampled_from("-*+1"), sentence), min_size=1, max_size=12))
    return "\n".join("  " * depth + ("1. " if mark == "1" else mark + " ") + text for depth, mark, text in items)


@st.composite
def table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 5))
    samples = ["`code`", "**b**", "日本", "👍", "1.5", "a\\|b", "[l](https://l.example)", "<x>", ""]
    cell = st.sampled_from(samples) | word
    rows = draw(st.lists(st.lists(cell, min_size=columns, max_size=columns), min_size=1, max_size=8))
    align = draw(st.lists(st.sampled_from(["---", ":--", "--:", ":-:"]), min_size=columns, max_size=columns))
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "|".join(align) + "|", *lines[1:]])


heading = st.builds(lambda level, text: "#" * level + " " + text, st.integers(1, 6), sentence)
quote = st.lists(sentence, min_size=1, max_size=3).map(lambda lines: "\n".join("> " + line for line in lines))
block = st.one_of(paragraph, paragraph, fence(), bullets(), table(), heading, quote, long_line, long_word,
                  st.just("---"), st.just(""))
markdown = st.builds(lambda blocks, seps: "".join(b + s for b, s in zip(blocks, seps, strict=False)),
                     st.lists(block, min_size=1, max_size=14),
                     st.lists(st.sampled_from(["\n\n", "\n", "\n\n\n", " \n \n"]), min_size=14, max_size=14))

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


def open_fence(text: str) -> str | None:
    """The opening line of the fence left open at the end of `text` (None: all closed), read line by line."""
    opener: str | None = None
    marker = ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match is None:
            continue
        if opener is None and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            opener, marker = line.rstrip(), match.group(1)
        elif (opener is not None and match.group(1)[0] == marker[0] and len(match.group(1)) >= len(marker)
              and not match.group(2).strip()):
            opener = None
    return opener


def closes(line: str, opener: str) -> bool:
    """Whether `line` closes the fence `opener` opened."""
    marker = _FENCE.match(opener)
    match = _FENCE.match(line)
    return (marker is not None and match is not None and match.group(1)[0] == marker.group(1)[0]
            and len(match.group(1)) >= len(marker.group(1)) and not match.group(2).strip())
