"""A general English word list: pyspellchecker's English word frequencies (words of everyday speech, from
film subtitles), by which the trust step tells a coined technical name ("ansible", "redis") from an everyday
word a guru may simply not use ("prune", "refresh")."""

from __future__ import annotations

import functools


@functools.cache
def english_words() -> frozenset[str]:
    """Every word of the list, lower case (160k; read once per process, about 0.3 s)."""
    from spellchecker import SpellChecker

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.keys())
