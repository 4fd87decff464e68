"""Coined technical words, told from everyday ones by a general word-piece vocabulary, and typos, told from both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from backend.adapters.embeddings.local_minilm import TOKENIZER_PATH, general_vocabulary
from backend.pipeline.support import Vocabulary, coined_words, support, word_pieces
from backend.pipeline.text import within_edits

DOCS = ["Run the app behind a reverse proxy and keep its logs in one file per day.",
        "Cache a rendered page for a minute with the cache helper; the next requests skip the view."]


def test_word_pieces_are_the_tokenizers_own() -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    words = set(re.findall(r"[a-z]+", (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8").lower()))
    words |= {"memcached", "logrotate", "kubernetes", "laptop", "grey", "wifi", "balancer"}
    for word in sorted(words):
        assert word_pieces(word, general_vocabulary()) == len(tokenizer.encode(word, add_special_tokens=False)), word


@pytest.mark.parametrize(("question", "coined"), [
    ("How do I cache pages in memcached?", ["memcach"]),
    ("What logrotate settings suit my app's log files?", ["logrotat"]),
    ("My laptop on the office wifi shows a grey page", []),  # everyday words, even ones a guru never uses
    ("How do I use Flask-Login with app.config?", []),  # names and identifiers are looked up as such
])
def test_coined_words_are_the_lower_case_words_the_vocabulary_spells_in_pieces(question: str,
                                                                                coined: list[str]) -> None:
    assert coined_words(question, general_vocabulary()) == coined


def vocabulary(**kwargs: object) -> Vocabulary:
    df = {"cache": 40, "render": 30, "pag": 90, "request": 80, "view": 60, "log": 20, "fil": 50, "memcach": 0}
    return Vocabulary(chunks=600, df=df, complete=True, coined=("memcach",), **kwargs)  # type: ignore[arg-type]


def test_a_coined_word_the_guru_lacks_refuses_like_an_absent_name() -> None:
    asked = "How do I cache rendered pages in memcached so requests skip the view?"
    absent = support(asked, DOCS, [0.7, 0.5], threshold=0.5, vocabulary=vocabulary())
    assert absent.signals["absent_name"] == 1.0 and not absent.kept
    typo = support(asked, DOCS, [0.7, 0.5], threshold=0.5, vocabulary=vocabulary(misspelt=frozenset({"memcach"})))
    assert typo.signals["absent_name"] == 0.0 and typo.kept


@pytest.mark.parametrize(("left", "right", "limit", "within"), [
    ("blueprint", "blueprnt", 1, True),  # a letter left out
    ("blueprint", "bleuprint", 1, True),  # two neighbours swapped
    ("template", "tempalte", 1, True),
    ("kafka", "flask", 1, False),
    ("scheduler", "schedlure", 1, False),  # two edits
    ("scheduler", "schedlure", 2, True),
    ("abc", "abcdef", 2, False),  # lengths alone rule it out
])
def test_within_edits_counts_the_typos_people_make(left: str, right: str, limit: int, within: bool) -> None:
    assert within_edits(left, right, limit) is within
