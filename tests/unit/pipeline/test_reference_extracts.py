"""Offline extracts from API reference pages: the section whose heading names what the question asks for is
quoted as its definition, and words a question is phrased with ("both", "how many") choose no window."""

from __future__ import annotations

from tests.support.offline_answers import answer, quoted

REFERENCE = """## `shelf.stack(...boxes)`

* `...boxes` {Box} A sequence of boxes
* Returns: {Shelf}

The `shelf.stack()` method stacks all given boxes together in the order given, then tidies the shelf.

Empty boxes are ignored.

## `shelf.tidy(shelf)`

* `shelf` {Shelf}
* Returns: {Shelf}

The `shelf.tidy()` method tidies the given shelf, merging gaps between boxes.

When several gaps between boxes are found on Linux and macOS builds, they are merged into one gap that
works like the others.

## `shelf.width`

* {number}

On Linux and macOS, both wide and narrow shelves are accepted; however, the width always counts whole boxes.
"""


def test_the_section_named_by_the_question_is_quoted_beside_a_wordier_neighbour() -> None:
    text = answer("How do I stack boxes in a way that works on both Linux and macOS?", ("shelf.md", REFERENCE))
    assert any("stacks all given boxes together" in line for line in quoted(text)), text
    assert "`...boxes` {Box} A sequence of boxes" in text  # quoted as a definition: from its signature on
    assert "accepted; however" not in text  # "both" and "works" alone do not bring in `shelf.width`


def test_how_many_and_how_much_do_not_choose_the_window() -> None:
    counts = """## `host.cores()`

* Returns: {Object[]}

Returns an array of objects describing each logical core of the host.

## `host.report()`

Says how many times and how much the host was asked; the report is kept in the log.
"""
    text = answer("How do I find out how many cores the host has?", ("host.md", counts))
    assert text.startswith("**host.md** [1] · *host.cores()*") and "how much the host was asked" not in text, text
