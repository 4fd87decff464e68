"""A general English word list: pyspellchecker's English word frequencies (words of everyday speech, from
film subtitles), by which the trust step tells a coined technical name ("ansible", "redis") from an everyday
word a guru may simply not use ("prune", "refresh")."""

from __future__ import annotations

import functools

COMMON_COUNT = 500
"""A word the list counts this often or more (of 1.6 billion words of film subtitles) is common English: about
26,000 words ("coworker" 944; "kafka" 50 and "prometheus" 142 are rare there)."""


@functools.cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    """Every word of the list and its common words, from one read of it (about 0.3 s, once per process)."""
    from spellchecker import SpellChecker

    counts = SpellChecker(language="en", distance=1).word_frequency
    return frozenset(counts.keys()), frozenset(word for word, count in counts.items() if count >= COMMON_COUNT)


def english_words() -> frozenset[str]:
    """Every word of the list, lower case (160k)."""
    return _lists()[0]


def common_words() -> frozenset[str]:
    """The words of the list that everyday English uses often (see COMMON_COUNT)."""
    return _lists()[1]
