"""The offline answer's extracts: the answering sentences with the code they introduce, whole, one section at a
time, nothing twice, always citing [1], within bounds. (The answerer contract is in test_answerers.py.)"""

from __future__ import annotations

import re

import pytest

from backend.pipeline.answerer_offline import MAX_ANSWER_CHARS, MAX_CODE_LINES, NO_LLM_NOTICE
from backend.pipeline.citing import renumber
from backend.pipeline.contexts import PASSAGE_BREAK
from tests.support.offline_answers import answer, quoted

REST = """Retrying
========

Celery can retry a task when it fails. Retrying is useful for transient errors,
e.g. a network timeout.

Automatic retries
-----------------

A retried task runs again on the same worker. To retry automatically on chosen
exceptions, pass ``autoretry_for`` to the task decorator::

    @app.task(autoretry_for=(TimeoutError,))
    def fetch(url):
        return get(url)

Workers log each retry at the warning level.

Manual retries
--------------

Call ``self.retry()`` in a bound task.
"""


def test_rest_the_answering_sentence_mid_section_comes_with_its_literal_block() -> None:
    text = answer("How do I retry automatically on TimeoutError?", ("Tasks", REST))
    assert "> To retry automatically on chosen exceptions, pass `autoretry_for` to the task decorator:" in text
    assert "```\n@app.task(autoretry_for=(TimeoutError,))\ndef fetch(url):\n    return get(url)\n```" in text
    assert "**Tasks** [1] · *Automatic retries*" in text
    assert not any("@app.task" in line for line in quoted(text))  # code is fenced, not quoted
    assert "self.retry()" not in text and "transient" not in text  # other sections are not spliced in


MARKDOWN = """## Deploying

Build the image first.

## Running the worker

The worker is a separate process. To start it with four processes, run the
following command from the project directory:

```bash
celery -A proj worker --concurrency=4
```

It connects to the broker on start.
"""


def test_markdown_the_sentence_introducing_a_fenced_command_brings_the_command() -> None:
    text = answer("How do I start the worker with four processes?", ("Guide", MARKDOWN))
    assert "run the following command from the project directory:" in text
    assert "```bash\ncelery -A proj worker --concurrency=4\n```" in text
    assert "Build the image" not in text


def test_a_context_starting_and_ending_mid_sentence_shows_no_fragment() -> None:
    context = ("ool of workers, which the retry uses. Retries wait for the countdown to pass. A retried task keeps "
               "its id. The countdown of a retry defaults to three")
    text = answer("How long does a retry wait?", ("Retries", context))
    assert quoted(text) == ["Retries wait for the countdown to pass.", "A retried task keeps its id."]


def test_a_heading_followed_by_another_section_is_never_shown_alone_nor_spliced() -> None:
    context = ("# Retry policy\n\n## Brokers\n\nRedis is a supported broker. RabbitMQ is the default broker.\n\n"
               "## Results\n\nResults are stored in the backend.")
    text = answer("What is the retry policy for brokers?", ("Docs", context))
    lines = quoted(text)
    assert lines and not any("Retry policy" in line for line in lines)
    assert "Results are stored" not in text  # one section per excerpt


def test_a_paragraph_shared_by_two_contexts_is_shown_once_and_a_context_shown_already_gives_its_place() -> None:
    shared = "Set max_retries on the task to cap the attempts. After the last attempt the error is raised."
    contexts = [
        ("Guide", f"Tasks can fail.\n\n{shared}"),
        ("Guide (mirror)", shared),
        ("FAQ", f"{shared}\n\nThe default max_retries is three."),
        ("Reference", "Brokers are not involved in max_retries counting."),
    ]
    text = answer("How do I set max_retries?", *contexts)
    assert text.count("Set max_retries on the task") == 1
    assert "The default max_retries is three." in text
    assert "**Guide (mirror)** [2]" not in text and "[4]" in text  # the mirror adds nothing: the next one shows
    assert renumber(text, 4)[1] == [1, 3, 4]


@pytest.mark.parametrize("contexts", [
    [("Empty headings", "# Title\n\n## Section\n")],
    [("Fragment", "and then the worker starts")],
    [("Unrelated", "The cafeteria opens at nine."), ("Also", "Lunch is at noon.")],
    [("Code", "```\nx = 1\n```")],
    [("", "Retries. " * 2000)],
])
def test_the_answer_always_cites_the_first_context(contexts: list[tuple[str, str]]) -> None:
    assert "[1]" in answer("How do I retry?", *contexts)


def test_the_answer_stays_within_its_bounds_and_cuts_only_overlong_sentences_at_a_word() -> None:
    long_sentence = "The retry " + "waits for the broker and " * 60 + "then runs."
    code = "\n".join(f"line_{i} = retry({i})" for i in range(80))
    contexts = [(f"Doc {n}", f"{long_sentence}\n\nRun this:\n\n```\n{code}\n```\n\n" + "Retry it. " * 300)
                for n in range(6)]
    text = answer("How does retry wait for the broker?", *contexts)
    assert len(NO_LLM_NOTICE) + len(text) <= MAX_ANSWER_CHARS
    assert all(len(line) <= 602 for line in quoted(text))
    assert any(line.endswith("…") or line.startswith("…") for line in quoted(text))
    for block in re.findall(r"```\n(.*?)\n```", text, re.DOTALL):
        assert len(block.splitlines()) <= MAX_CODE_LINES


def test_idf_a_word_every_passage_shares_counts_little_and_identifiers_count_more() -> None:
    context = ("Celery is a task queue. Celery workers run tasks. Celery can cap retries with max_retries. "
               "Celery is written in Python.")
    text = answer("How do I cap Celery max_retries?", ("Docs", context))
    assert quoted(text)[0] == "Celery can cap retries with max_retries."


def test_a_code_file_is_quoted_as_code_in_its_language() -> None:
    source = "import os\n\n\ndef broker_url() -> str:\n    return os.environ['BROKER_URL']\n\n\nVERSION = 2\n"
    text = answer("Where is the broker url read?", ("app/config.py", source))
    assert "```python\ndef broker_url() -> str:\n    return os.environ['BROKER_URL']\n```" in text


def test_a_sources_bracketed_numbers_are_not_taken_for_citations() -> None:
    text = answer("How are retries counted?", ("Paper", "Retries are counted per task [2]. See `items[1]`."),
                  ("Other", "Retries are logged."))
    assert "per task \\[2]" in text and "`items[1]`" in text
    assert renumber(text, 2)[1] == [1, 2]


def test_passages_of_one_page_are_never_joined() -> None:
    context = "Retries wait for the countdown." + PASSAGE_BREAK + "The countdown is in seconds."
    lines = quoted(answer("How does the retry countdown work?", ("Page", context)))
    assert len(lines) == 1


def test_a_markdown_table_keeps_its_header_and_its_best_rows() -> None:
    rows = "\n".join(f"| `OPTION_{i}` | {i} | unrelated |" for i in range(30))
    table = f"The settings:\n\n| name | default | meaning |\n|---|---|---|\n{rows}\n| `PORT` | 8000 | the port |\n"
    text = answer("Which PORT is the default?", ("Settings", table))
    assert "| name | default | meaning |\n|---|---|---|\n" in text and "| `PORT` | 8000 | the port |" in text
    assert text.count("| `OPTION_") < 8


def test_a_page_about_a_file_is_prose_even_when_its_title_names_the_file() -> None:
    page = "The settings.py file holds the configuration of the project. Each setting is a module constant."
    text = answer("What does settings.py hold?", ("settings.py", page))
    assert "> The settings.py file holds the configuration of the project." in text and "```" not in text


FAVICON = """Adding a favicon
================

A common question is how to add a favicon to a Flask application. First, of course, you need an icon.
It should be 16 × 16 pixels and in the ICO file format. Put the icon in your static directory,
then link to it from the page's head:

.. code-block:: html

    <link rel="shortcut icon" href="/static/favicon.ico">

Browsers that ignore the link still ask for /favicon.ico at the site's root.
"""


def test_a_page_that_restates_the_question_first_still_shows_the_answer_after_it() -> None:
    text = answer("How do I add a favicon to a Flask application?", ("patterns/favicon.rst", FAVICON))
    assert "A common question is how to add a favicon" in text  # the best match, restating the question
    assert "static directory" in text and 'rel="shortcut icon"' in text  # and what answers it, after it
