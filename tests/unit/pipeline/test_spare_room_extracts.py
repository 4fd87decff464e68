"""The room an offline answer has left goes to the contexts quoted: the paragraph a passage builds on, then the
context's next passage that matches the question nearly as well; never unrelated text, never past the budget."""

from __future__ import annotations

from backend.pipeline.answerer_offline import MAX_ANSWER_CHARS, NO_LLM_NOTICE
from tests.support.offline_answers import answer, quoted

STREAMING = """Streaming with Context
----------------------

Weather stations report their readings every hour. The readings are kept for
a month.

The ``session`` will not be open while the producer is running, because the
handler has already returned at that point. If you try to read ``session``,
you will get a ``ClosedSessionError``.

If your producer function relies on data in ``session``, use the
``keep_session`` wrapper. This will keep the session open during the producer.

.. code-block:: python

    return keep_session(produce())
"""

ACCOUNTS = """Storing Accounts
----------------

- Validate that the ``name`` and ``secret`` fields are not empty.
- If validation succeeds, insert the new account into the table. Secrets must
  never be stored in the table as they are; ``make_digest`` is used to digest
  the secret, and the digest is stored.

Signing In
----------

The sign-in view is written the same way, with one difference.

- ``same_digest`` digests the submitted account secret as the stored one was and compares
  the two digests in constant time. If they match, the secret is correct.

Theme
-----

Colours of the sign-in page can be changed in the theme, and the theme is kept
in the table of settings.
"""


def test_the_paragraph_a_passage_builds_on_is_quoted_when_the_answer_has_room() -> None:
    text = answer("When should I wrap a producer in keep_session?", ("Streaming", STREAMING))
    lines = quoted(text)
    assert lines[0].startswith("The `session` will not be open while the producer is running")
    assert "you will get a `ClosedSessionError`." in text  # the why, a paragraph before the words that matched
    assert "If your producer function relies on data in `session`" in text
    assert "Weather stations" not in text  # one paragraph back, no further


def test_a_passage_of_the_first_page_nearly_as_good_as_its_best_is_quoted_in_the_spare_room() -> None:
    text = answer("What is the right way to store account secrets?", ("Accounts", ACCOUNTS))
    assert "`make_digest` is used to digest the secret" in text
    assert "`same_digest` digests the submitted account secret as the stored one was" in text  # shown apart, after "…"
    assert text.index("`make_digest`") < text.index("\n… · *Signing In*\n") < text.index("`same_digest`")
    assert "Colours" not in text


def test_a_preceding_paragraph_sharing_no_word_with_the_passage_is_left_out() -> None:
    page = ("Deploying\n---------\n\nThe weather is fine today.\n\n"
            "Use ``ship --now`` to push the build to every host at once.\n")
    text = answer("How do I push the build with ship --now?", ("Deploy", page))
    assert "ship --now" in text and "weather" not in text


def test_the_spare_room_never_takes_the_answer_past_its_budget() -> None:
    pages = [(f"Page {n}", STREAMING.replace("producer", f"producer{n}") * 6) for n in range(6)]
    text = answer("When should I wrap a producer in keep_session?", *pages)
    assert len(NO_LLM_NOTICE) + len(text) <= MAX_ANSWER_CHARS


PORTS = """Serving
-------

The ``serve`` command starts the development server on port 5000, the default
port, and reloads it when the code changes.

Other Options
-------------

Colours of the console can be changed in the theme.

Port in Use
-----------

If another program already holds port 5000, the server stops when it starts.
It prints one of the following messages:
"""


def test_a_further_passage_never_ends_on_a_sentence_announcing_what_it_leaves_out() -> None:
    text = answer("Why does the development server on port 5000 stop when it starts?", ("Serving", PORTS))
    assert "If another program already holds port 5000, the server stops when it starts." in text
    assert "one of the following messages" not in text
