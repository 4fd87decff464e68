"""A context cut into whole blocks: sections at headings, whole sentences, code blocks, lists; cut ends dropped."""

from __future__ import annotations

import pytest

from backend.pipeline.contexts import PASSAGE_BREAK
from backend.pipeline.excerpts import Block, BlockKind, segment
from backend.pipeline.text import sentences_of, split_sentences


def kinds(blocks: list[Block]) -> list[tuple[str, str]]:
    return [(b.kind.value, b.text) for b in blocks]


@pytest.mark.parametrize("sentence", [
    "Use a broker, e.g. Redis or RabbitMQ, for production.",
    "Pick one pool, i.e. Prefork is the default.",
    "Since version 4.2 the setting is read from app.config at start-up.",
    "Edit settings.py and celeryconfig.py. ",
    "See Fig. 3 and ask Dr. Smith about it.",
    "The worker (cf. Section 2) restarts. ",
    "J. R. R. Tolkien wrote it in vol. 2 of the series.",
])
def test_abbreviations_versions_and_file_names_do_not_end_a_sentence(sentence: str) -> None:
    assert sentences_of(sentence) == [sentence.strip()]


def test_sentences_end_at_full_stops_even_after_a_version_or_code() -> None:
    text = 'Install version 4.2. Then run `celery worker`. "Done." Next! Is it? 1. Yes'
    assert sentences_of(text) == ["Install version 4.2.", "Then run `celery worker`.", '"Done."', "Next!", "Is it?",
                                  "1. Yes"]
    assert split_sentences("First line\nsecond line. Third.") == ["First line", "second line.", "Third."]


REST = """Retrying
========

Celery retries a task when asked. Since version 4.2, the
decorator takes ``autoretry_for``::

    @app.task(autoretry_for=(IOError,))
    def fetch(): ...

.. code-block:: console

   $ celery -A proj worker

.. note::

   Retries count against :attr:`~celery.Task.max_retries`.

.. image:: diagram.png

Limits
------
See :ref:`the limits page <limits>` and `the FAQ <https://x.example/faq>`_.
"""


def test_rest_titles_literal_blocks_directives_and_roles() -> None:
    blocks = segment(REST)
    assert kinds(blocks) == [
        ("sentence", "Celery retries a task when asked."),
        ("sentence", "Since version 4.2, the decorator takes `autoretry_for`:"),
        ("code", "@app.task(autoretry_for=(IOError,))\ndef fetch(): ..."),
        ("code", "$ celery -A proj worker"),
        ("sentence", "Retries count against `max_retries`."),
        ("sentence", "See the limits page and the FAQ."),
    ]
    assert [b.heading for b in blocks] == ["Retrying"] * 5 + ["Limits"]
    assert blocks[1].introduces and blocks[3].language == "console"
    assert len({b.section for b in blocks[:5]}) == 1 and blocks[5].section != blocks[0].section


MARKDOWN = """# Install

You need Python 3.11. The package is on PyPI and
installs with pip:

```bash
pip install openguru
```

    openguru init

## Options

- `--port` sets the port.
- `--data` sets the data directory,
  created when missing.

| option | default |
|--------|---------|
| port   | 8000    |
"""


def test_markdown_headings_wrapped_sentences_fences_indented_code_lists_and_tables() -> None:
    blocks = segment(MARKDOWN)
    assert kinds(blocks) == [
        ("sentence", "You need Python 3.11."),
        ("sentence", "The package is on PyPI and installs with pip:"),
        ("code", "pip install openguru"),
        ("code", "openguru init"),
        ("item", "`--port` sets the port."),
        ("item", "`--data` sets the data directory, created when missing."),
        ("table", "| option | default |\n|--------|---------|\n| port   | 8000    |"),
    ]
    assert blocks[2].language == "bash" and {b.heading for b in blocks[4:]} == {"Options"}


def test_a_sentence_cut_by_the_chunking_is_dropped_at_either_end() -> None:
    text = "ver pool, which matters. Workers restart when idle.\n\nThey reload the code. When the broker is"
    assert kinds(segment(text)) == [("sentence", "Workers restart when idle."), ("sentence", "They reload the code.")]


def test_a_fragment_that_is_all_there_is_is_kept_and_marked() -> None:
    (block,) = segment("and then you start the worker with celery dash a")
    assert block.fragment and block.text.startswith("and then")


def test_a_chunk_starting_inside_a_fence_does_not_turn_the_prose_after_it_into_code() -> None:
    text = "    x = 1\n    return x\n```\n\nThe function returns one.\n\n```python\nprint(f())\n```\n"
    assert kinds(segment(text)) == [("sentence", "The function returns one."), ("code", "print(f())")]


def test_pdf_lines_are_joined_hyphenation_undone_and_short_title_lines_start_sections() -> None:
    text = ("The result backend stores task states for later.\n2.3 Configuring the broker\n"
            "The broker URL is read from the BROKER_URL setting at start-\nup. Connections are retried.")
    blocks = segment(text)
    assert kinds(blocks)[1:] == [("sentence", "The broker URL is read from the BROKER_URL setting at startup."),
                                 ("sentence", "Connections are retried.")]
    assert blocks[1].heading == "2.3 Configuring the broker" and blocks[0].section != blocks[1].section


def test_a_numbered_pdf_heading_starts_a_section_before_a_name_in_lower_case() -> None:
    text = ("The tool reads definitions from a file.\n3.3 Invoking asn1Decoding\nasn1Decoding builds a structure "
            "from a DER file.\nIt prints the structure.\n3 Workers\nstart at once.")
    blocks = segment(text)
    assert blocks[1].text == "asn1Decoding builds a structure from a DER file."  # the heading is not glued on
    assert blocks[1].heading == "3.3 Invoking asn1Decoding" and blocks[0].section != blocks[1].section
    assert blocks[-1].text == "3 Workers start at once."  # a count opening a sentence is no heading
    nested = segment("3 Utilities\n3.1 Invoking asn1Parser\nasn1Parser reads a single file of definitions.")
    assert [(b.heading, b.text) for b in nested] == [("3.1 Invoking asn1Parser",
                                                      "asn1Parser reads a single file of definitions.")]


def test_each_passage_of_a_page_is_its_own_section_with_its_own_cut_ends() -> None:
    text = "Workers restart when idle. They reload" + PASSAGE_BREAK + "the code and then. Brokers queue tasks."
    blocks = segment(text)
    assert kinds(blocks) == [("sentence", "Workers restart when idle."), ("sentence", "Brokers queue tasks.")]
    assert blocks[0].section != blocks[1].section


def test_a_code_file_is_cut_at_blank_lines() -> None:
    blocks = segment("import os\n\n\ndef url():\n    return os.environ['URL']\n", code=True, language="python")
    assert [(b.kind, b.text, b.language) for b in blocks] == [
        (BlockKind.CODE, "import os", "python"), (BlockKind.CODE, "def url():\n    return os.environ['URL']", "python")]


def test_headings_alone_give_no_block() -> None:
    assert segment("# Install\n\n## Options\n\nTitle\n=====\n") == []


def test_a_sentence_may_start_with_a_code_span() -> None:
    assert kinds(segment("`retry()` waits for the countdown. Then it runs.")) == [
        ("sentence", "`retry()` waits for the countdown."), ("sentence", "Then it runs.")]


def test_deeply_indented_input_is_read_without_recursing_without_bound() -> None:
    text = ".. note::\n\n" + "".join(" " * i + ".. note::\n\n" for i in range(1, 400)) + " " * 400 + "Deep text."
    assert segment(text)[-1].text.endswith("Deep text.")  # past a few levels the rest reads as one paragraph


def test_a_rest_title_underlined_with_backticks_leaves_the_passage_rest() -> None:
    text = ("Unique URLs\n```````````\n\nThe two rules differ in their use of a trailing slash. ::\n\n"
            "    @app.route('/projects/')\n    def projects(): ...\n\n"
            "The ``projects`` endpoint has a trailing slash.\n")
    blocks = segment(text)
    assert kinds(blocks) == [
        ("sentence", "The two rules differ in their use of a trailing slash."),  # " ::" after a space shows nothing
        ("code", "@app.route('/projects/')\ndef projects(): ..."),
        ("sentence", "The `projects` endpoint has a trailing slash."),
    ]
    assert {b.heading for b in blocks} == {"Unique URLs"}


def test_a_chunk_cut_inside_a_nested_list_goes_on_as_a_list_not_as_code() -> None:
    # A chunk starts inside an option list (Node.js's API docs): its first lines are an item's indented
    # continuation. Read as markdown's indented code, the whole list was quoted as one code block.
    cut = ("    check for request and headers timeout in incomplete requests.\n"
           "    **Default:** `30000`.\n"
           "  * `requestTimeout`: Sets the timeout value in milliseconds for receiving\n"
           "    the entire request from the client.\n"
           "    **Default:** `300000`.\n"
           "  * `noDelay` {boolean} If set to `true`, it disables the use of Nagle's algorithm.\n")
    blocks = segment(cut)
    assert not [b for b in blocks if b.kind is BlockKind.CODE]
    assert any(b.kind is BlockKind.ITEM and b.text.startswith("`requestTimeout`: Sets the timeout") for b in blocks)
    code = segment("    const server = http.createServer();\n    server.listen(8000);\n")
    assert [b.kind for b in code] == [BlockKind.CODE]  # indented code at the start is still code
