"""Rule-based follow-ups: a question that refers back borrows earlier questions, a self-contained one stands alone."""

from __future__ import annotations

import pytest

from backend.pipeline.answer_types import Turn, UnderstandRequest
from backend.pipeline.follow_up import refers_back
from backend.pipeline.understanding import MAX_BORROWED, retrieval_query, understand_by_rules

# The rules were written around these.
STANDS_ALONE = [
    "How do I limit upload bandwidth?",
    "What does exit code 2 mean?",
    "How do I configure logging in production?",
    "What is MAX_CONTENT_LENGTH?",
    "What does -v do?",
    "Explain exit codes",
    "Upload bandwidth limits",  # three topic words: a search, not a fragment
    "Is there a way to limit upload bandwidth?",  # existential "there"
    "Is it possible to run two workers?",  # "it" holding the place of "to run two workers"
    "How long does it take to index a site?",
    "How do I restart a worker when it crashes?",  # "it" is the worker
    "How does a worker report its status?",
    "How do I stop the server and restart it?",
    "Where is the file that holds the config?",  # relative "that"
    "How do I make sure that tasks are retried?",
    "Can I run more than one worker?",  # numeral "one"
    "Is there an example of a retry policy?",
    "What does `this` mean in a task?",  # quoted code is a name, not a pronoun
]
REFERS_BACK = [
    "How do I configure it?",
    "Is this setting required?",  # a demonstrative determiner points back too
    "Why?",
    "How?",
    "And on Windows?",
    "What about the CLI?",  # names a topic, but as a continuation
    "Can you give an example?",
    "example?",
    "Tell me more",
    "Why is that?",
    "What does that mean?",
    "How do I get there?",
    "Which one is faster?",
    "Can I use Redis instead?",
    "Does it work on Windows too?",
    "Docker?",
    "Is it safe?",  # no clause for the "it" to stand for
    "How long does it take?",
    "What's the default?",
    "What is its default port?",
    "What is the default value of its timeout?",
    "How do I install and configure it?",
    "What happens when it fails?",
    "Does the same apply to downloads?",
    "Can I also limit downloads?",
    "Why not?",
    "Is there another way?",
]
# Written after the rules were settled; all but two passed as first run (the two marked ones led to adding
# "recommended" and plurals such as "defaults" to the words that name no topic).
STANDS_ALONE_UNSEEN = [
    "Which Python versions are supported?",
    "Why does my worker use so much memory?",
    "What happens if a task raises an exception?",
    "Is it normal that indexing takes an hour?",
    "How do I send a message to a Slack channel when a job finishes?",
    "Can two users edit the same guru at once?",
    "Can I use Postgres instead of SQLite?",
    "What are webhooks and how do I use them?",
    "What's a guru and how do I create one?",
    "How do workers know when they should stop?",
    "Is it worth enabling compression for small files?",
    "How many workers can one machine run?",
    "What is app.config.from_file for?",
    "How do I set --workers in docker compose?",
    "Is there any way to speed up indexing?",
    "Is my data sent to OpenAI?",
    "What is a 429 error?",
]
REFERS_BACK_UNSEEN = [
    "Does that also work with Docker?",
    "Where do I find those?",
    "Is there a CLI for that?",
    "Can I do the same with the API?",
    "Which of them is faster?",
    "With Postgres?",
    "Could you explain that in more detail?",
    "How do I set it up on macOS?",
    "What are the other options?",
    "What else do I need?",
    "Same for Docker?",
    "Any other way?",
    "Does it support SSO?",
    "And if the worker dies?",
    "Okay, and for Slack?",
    "Which is recommended?",
    "What are the defaults?",
]


@pytest.mark.parametrize("question", STANDS_ALONE + STANDS_ALONE_UNSEEN)
def test_a_self_contained_question_stands_alone(question: str) -> None:
    assert not refers_back(question)


@pytest.mark.parametrize("question", REFERS_BACK + REFERS_BACK_UNSEEN)
def test_a_question_that_leans_on_the_conversation_refers_back(question: str) -> None:
    assert refers_back(question)


MONITORING = Turn("How do I monitor the workers?", "Open the Monitoring page.")


def test_a_new_topic_after_an_answer_is_searched_on_its_own() -> None:
    assert retrieval_query("How do I limit upload bandwidth?", (MONITORING,)) == "How do I limit upload bandwidth?"
    understanding = understand_by_rules(UnderstandRequest("What does exit code 2 mean?", "G", "Tool", (MONITORING,)))
    assert understanding.retrieval_query == "What does exit code 2 mean?"


def test_a_follow_up_borrows_the_previous_question() -> None:
    assert retrieval_query("Can I alert on it?", (MONITORING,)) == "How do I monitor the workers? Can I alert on it?"


def test_a_chain_of_follow_ups_borrows_back_to_the_last_question_that_stood_alone() -> None:
    history = (MONITORING, Turn("How do I install the agent?", "Run the installer."),
               Turn("And on Windows?", "Use the MSI."))
    assert retrieval_query("Is it slow there?", history) == (
        "How do I install the agent? And on Windows? Is it slow there?")


def test_borrowing_is_bounded() -> None:
    history = tuple(Turn(f"And {n}?", "...") for n in range(10))
    borrowed = retrieval_query("And then?", history).split("?")
    assert len(borrowed) - 2 == MAX_BORROWED and borrowed[0] == f"And {10 - MAX_BORROWED}"


def test_without_history_the_question_is_the_query() -> None:
    assert retrieval_query("Why?", ()) == "Why?"
