"""Offline extracts from API reference pages: words a question is phrased with ("how many", "how much", "both")
choose no window, so the section that answers is quoted first."""

from __future__ import annotations

from tests.support.offline_answers import answer

COUNTS = """## `host.cores()`

* Returns: {Object[]}

Returns an array of objects describing each logical core of the host.

## `host.report()`

Says how many times and how much the host was asked; the report is kept in the log.
"""


def test_how_many_and_how_much_do_not_choose_the_window() -> None:
    text = answer("How do I find out how many cores the host has?", ("host.md", COUNTS))
    assert text.startswith("**host.md** [1] · *host.cores()*") and "how much the host was asked" not in text, text


def test_both_does_not_choose_the_window() -> None:
    shelves = """## `shelf.width`

On Linux, both wide and narrow shelves are accepted.

## `shelf.stack(...boxes)`

The `shelf.stack()` method stacks the given boxes on one shelf.
"""
    text = answer("How do I stack boxes in a way that works on both Linux and macOS?", ("shelf.md", shelves))
    assert text.startswith("**shelf.md** [1] · *shelf.stack(...boxes)*"), text
