"""The trust score: distinctive terms by the guru's own frequencies, names the guru never mentions, the window."""

from __future__ import annotations

import pytest

from backend.pipeline.support import (
    Vocabulary,
    code_names,
    keep_window,
    name_terms,
    quoted_by,
    support,
    term_weights,
    text_terms,
    whole_word_terms,
)

DOCS = ["Set MAX_CONTENT_LENGTH to limit the size of uploaded files; larger uploads get a 413 error.",
        "Sessions are signed with the SECRET_KEY; changing it signs every user out.",
        "Run the development server with flask run --debug to reload on changes."]


def vocabulary(**df: int) -> Vocabulary:
    return Vocabulary(chunks=600, df={"upload": 40, "file": 90, "size": 30, "limit": 25, **df}, complete=True)


@pytest.mark.parametrize(("question", "names"), [
    ("How do I add OAuth login with Google?", ["oauth", "googl"]),
    ("How do I make Flask-Login's cookie last 30 days?", ["flask", "login", "flask-login"]),
    ("Can I store files on S3?", ["s3"]),
    ("What does JWT stand for?", ["jwt"]),
    ("How do I limit uploads? Then what happens.", []),  # capitals that start a sentence are not names
    ("my users get logged out randomly", []),
    ("Another page gives 'Not Found' IF I add a slash", ["found"]),  # a capitalised stopword is never a name
    ("How do I run CPU-heavy work off the main thread?", ["cpu"]),  # an acronym qualifying a word: no compound
    ("Does Socket.IO work with JSON-RPC?", ["socket", "io", "json", "rpc", "socket.io", "json-rpc"]),
])
def test_names_are_the_words_written_as_names(question: str, names: list[str]) -> None:
    assert name_terms(question) == names


def test_text_holds_names_whole_beside_their_parts() -> None:
    held = text_terms("Use Flask-SQLAlchemy with GraphQL over HTTP/2 on S3.")
    assert {"flask-sqlalchemy", "graphql", "graph", "ql", "s3"} <= held
    assert whole_word_terms("plain words only") == set()


def test_keep_window_keeps_what_is_near_the_best() -> None:
    assert keep_window([0.9, 0.6, 0.54, 0.2]) == (0, 1)
    assert keep_window([0.3, 0.25, 0.05]) == (0, 1, 2)
    assert keep_window([]) == ()


def test_keep_window_keeps_a_page_a_kept_one_links_to_within_the_wider_window() -> None:
    scores = [0.81, 0.37, 0.35, 0.05]
    assert keep_window(scores) == (0,)
    # The best page links to the second: kept. A link from a page not kept, or to one graded far below, is not.
    assert keep_window(scores, links=[(0, 1), (1, 2), (0, 3), (0, 9)]) == (0, 1)


def test_a_question_about_a_name_the_guru_never_mentions_is_refused() -> None:
    # Same grade, same held terms: the only difference is whether the guru's sources ever name the thing asked.
    asked = "How do I limit upload size with Flask-Uploads?"
    present = support(asked, DOCS, [0.6, 0.4], threshold=0.5, vocabulary=vocabulary(flask=500, **{"flask-uploads": 2}))
    absent = support(asked, DOCS, [0.6, 0.4], threshold=0.5, vocabulary=vocabulary(flask=500))
    assert absent.signals["absent_name"] == 1.0 and present.signals["absent_name"] == 0.0
    assert present.kept and present.trust_score >= 0.5
    assert not absent.kept and absent.trust_score < 0.5


def test_a_symptom_phrased_question_with_weak_scores_but_no_unknown_name_is_answered() -> None:
    decided = support("my uploads fail when the file is too big", DOCS, [0.3, 0.28, 0.12], threshold=0.5,
                      vocabulary=vocabulary(big=3, fail=5))
    assert decided.trust_score >= 0.5 and decided.kept == (0, 1, 2)


def test_an_unrelated_question_is_refused() -> None:
    decided = support("how long should I boil an egg", DOCS, [0.12, 0.1], threshold=0.5, vocabulary=vocabulary())
    assert decided.signals["missing"] > 0.5 and not decided.kept


def test_without_complete_counts_no_term_is_called_absent_from_the_guru() -> None:
    partial = Vocabulary(chunks=600, df={}, complete=False)
    decided = support("How do I add OAuth?", DOCS, [0.6], threshold=0.5, vocabulary=partial)
    assert decided.signals["absent_name"] == 0.0 and decided.signals["missing"] == 0.0


def test_a_question_about_the_subject_trusts_its_summary_grade() -> None:
    decided = support("What is this project about?", DOCS, [0.9], threshold=0.5, vocabulary=vocabulary(),
                      subject=True)
    assert decided.trust_score == 0.9 and decided.kept == (0,)



def test_who_a_question_is_about_is_no_term_the_guru_could_lack() -> None:
    # "nobody else", "someone", "everything": phrasing, not topic; counted absent, they read as a near miss.
    vocabulary = Vocabulary(chunks=100, df={"dev": 5, "server": 40, "network": 8, "open": 9}, complete=True)
    asked = "Nobody on the network can open the dev server; someone says everything and anything is fine"
    terms = set(term_weights(asked, vocabulary, []))
    assert {"network", "dev", "server"} <= terms
    assert not [t for t in terms if t.startswith(("nobod", "someon", "everyth", "anyth"))], terms


@pytest.mark.parametrize(("question", "names"), [
    ("On my Ubuntu box I watch a config file with fs.watch(). Why do events stop?", ["fs.watch"]),
    ("Why does populate() in Mongoose return null?", ["populate"]),
    ("Set moduleResolution and use url_for or `app.run`", ["app.run", "moduleResolution", "url_for"]),
    ("Why is Buffer.allocUnsafe() unsafe on my MacBook?", ["Buffer.allocUnsafe"]),
    ("How do I make Flask-Login's 'remember me' cookie last 30 days?", []),
])
def test_code_names_are_calls_snake_and_camel_case_and_backticked_spans(question: str, names: list[str]) -> None:
    assert sorted(code_names(question)) == sorted(names)


def test_a_name_beside_code_the_evidence_quotes_is_the_askers_setting_not_the_subject() -> None:
    vocabulary = Vocabulary(chunks=100, df={"watch": 6, "fil": 30, "event": 9, "stop": 4, "edit": 3, "ubuntu": 0},
                            complete=True)
    asked = "On my Ubuntu box I watch a file with fs.watch(). After one edit, events stop. Why?"
    quoting = "fs.watch(filename[, options][, listener]) watches for changes; an editor that renames the file ..."
    assert support(asked, [quoting], [0.6], threshold=0.5, vocabulary=vocabulary).signals["absent_name"] == 0.0
    other = "Watch mode re-runs the tests when a file changes."
    assert support(asked, [other], [0.6], threshold=0.5, vocabulary=vocabulary).signals["absent_name"] == 1.0
    # Same case only: the evidence naming `Watch` or `fs.watchFile` does not quote fs.watch.
    assert not quoted_by(["fs.watch"], ["fs.watchFile(filename)", "FS.WATCH()"])
    # A bare call is quoted by its qualified form (the asker leaves out the object); a dotted one only as written.
    assert quoted_by(["toString"], ["`buf.toString([encoding])` decodes the buffer."])
    assert not quoted_by(["toString"], ["buf.toStringTag", "ToString"])
    assert not quoted_by(["fs.watch"], ["nodefs.watch()", "x.fs.watchers"])


def test_a_maintainer_note_is_kept_without_pushing_out_the_pages() -> None:
    # The note (index 0) is graded far above the pages; the pages keep their own window.
    assert keep_window([0.99, 0.6, 0.5, 0.1], notes=[0]) == (0, 1, 2)
    assert keep_window([0.99, 0.6, 0.5, 0.1]) == (0,)
    assert keep_window([0.6], notes=[0]) == (0,)
