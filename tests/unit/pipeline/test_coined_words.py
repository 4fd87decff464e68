"""Coined technical words, told from everyday ones by a general word-piece vocabulary and an English word list, and
typos, told from both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from backend.adapters.embeddings.local_minilm import TOKENIZER_PATH, general_vocabulary
from backend.adapters.words.english import common_words, english_words
from backend.pipeline.support import Vocabulary, coined_words, compound, english, is_coined, support, word_pieces
from backend.pipeline.text import typo_of, within_edits

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
    ("Which ansible tasks install my app, and can heroku run it?", ["ansibl", "heroku"]),  # two pieces, unlisted
    ("Should I prune or refresh the tutorial's inbox and signup checkbox?", []),  # listed, or two listed words
    ("Where do the json and url settings go?", []),  # short: abbreviations every technical text uses
])
def test_coined_words_are_the_lower_case_words_the_vocabulary_spells_in_pieces(question: str,
                                                                                coined: list[str]) -> None:
    assert coined_words(question, general_vocabulary(), english_words()) == coined


@pytest.mark.parametrize(("word", "listed"), [
    ("prune", True), ("attaches", True), ("chunked", True), ("copies", True), ("stopped", True),
    ("errored", True), ("ansible", False), ("redis", False), ("systemd", False), ("kubectl", False),
])
def test_english_accounts_for_listed_words_and_their_common_forms(word: str, listed: bool) -> None:
    assert english(word, english_words()) is listed


@pytest.mark.parametrize(("word", "joined"), [
    ("checkbox", True), ("dropdown", True), ("signup", True), ("inbox", True), ("checkboxes", True),
    ("redis", False), ("heroku", False), ("ansible", False),  # "red" + "is", "hero" + "ku": a piece too short
])
def test_compounds_are_two_listed_words_or_one_and_a_particle(word: str, joined: bool) -> None:
    assert compound(word, english_words()) is joined


def test_the_word_list_only_widens_what_two_pieces_can_be() -> None:
    vocabulary, words = general_vocabulary(), english_words()
    assert word_pieces("redis", vocabulary) == 2 and is_coined("redis", vocabulary, words)
    assert not is_coined("redis", vocabulary, frozenset({"redis"}))  # a listed word is everyday
    assert word_pieces("webhook", vocabulary) == 3 and is_coined("webhook", vocabulary, words)  # as before
    assert not is_coined("laptop", vocabulary, frozenset())  # one piece: everyday whatever the list says


def vocabulary(**kwargs: object) -> Vocabulary:
    df = {"cache": 40, "render": 30, "pag": 90, "request": 80, "view": 60, "log": 20, "fil": 50, "memcach": 0}
    return Vocabulary(chunks=600, df=df, complete=True, coined=("memcach",), **kwargs)  # type: ignore[arg-type]


def test_a_coined_word_the_guru_lacks_refuses_like_an_absent_name() -> None:
    asked = "How do I cache rendered pages in memcached so requests skip the view?"
    absent = support(asked, DOCS, [0.7, 0.5], threshold=0.5, vocabulary=vocabulary())
    assert absent.signals["absent_name"] == 1.0 and not absent.kept
    typo = support(asked, DOCS, [0.7, 0.5], threshold=0.5, vocabulary=vocabulary(misspelt=frozenset({"memcach"})))
    assert typo.signals["absent_name"] == 0.0 and typo.kept
    variant = support(asked, DOCS, [0.7, 0.5], threshold=0.5, vocabulary=vocabulary(variants=frozenset({"memcach"})))
    assert variant.signals["absent_name"] == 0.0 and variant.kept


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


@pytest.mark.parametrize(("word", "known", "typo"), [
    ("blueprnt", "blueprint", True),
    ("crontabb", "crontab", True),  # a key held down: the last letter again
    ("systemd", "system", False),  # a name built on a word, not the word mistyped
    ("flaskr", "flask", False),
    ("sytem", "system", True),
])
def test_a_word_extended_with_new_letters_is_a_new_name_not_a_typo(word: str, known: str, typo: bool) -> None:
    assert typo_of(word, known, 1) is typo


def test_a_word_of_many_pieces_that_everyday_english_uses_often_is_not_coined() -> None:
    vocabulary, words, common = general_vocabulary(), english_words(), common_words()
    assert word_pieces("coworker", vocabulary) >= 3 and not is_coined("coworker", vocabulary, words, common)
    assert not is_coined("coworkers", vocabulary, words, common)  # its plural too
    for name in ("kafka", "prometheus", "memcached", "logrotate", "webhook"):  # rare or unknown in speech
        assert is_coined(name, vocabulary, words, common), name
    assert coined_words("My coworker says kafka is faster", vocabulary, words, common) == ["kafka"]
