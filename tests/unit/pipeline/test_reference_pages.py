"""Reference pages (Sphinx object descriptions, code cut mid-block): the definition asked about is quoted whole."""

from __future__ import annotations

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder
from backend.pipeline.chunking import ChunkingConfig, split_document
from backend.pipeline.contexts import join_chunks
from backend.pipeline.excerpts import BlockKind, segment
from backend.pipeline.ingest_types import ContentType, Document
from backend.pipeline.sanitize import neutralise
from tests.support.offline_answers import answer, quoted

# Written like a configuration reference: one `.. py:data::` per setting, each body its definition.
SETTINGS = """Builtin Settings
----------------

.. py:data:: WORKER_TIMEOUT

    How long a worker may run one job before it is stopped. Stopped jobs are
    put back on the queue for another worker.

    Default: ``300`` seconds

    A job can set its own limit on ``Job.worker_timeout``; the worker then
    waits that timeout instead of the worker timeout of its queue.

.. py:data:: WORKER_RESTART

    Whether a worker restarts after every job. Restarting frees memory that a
    leaky job kept, but each job then pays the start-up time.

    Default: ``False``

.. versionadded:: 2.1

.. py:function:: retry_job(job_id, *, delay=0)

    Put a failed job back on the queue, after ``delay`` seconds.
"""


def test_an_object_description_is_a_section_headed_by_its_name_even_as_neutralised() -> None:
    for text in (SETTINGS, neutralise(SETTINGS)):  # stored text carries "data\u200b:" (pipeline.sanitize)
        blocks = segment(text)
        timeout = [b.text for b in blocks if b.heading == "WORKER_TIMEOUT"]
        assert timeout[:3] == ["How long a worker may run one job before it is stopped.",
                               "Stopped jobs are put back on the queue for another worker.", "Default: `300` seconds"]
        assert [b.text for b in blocks if b.heading == "retry_job(job_id, *, delay=0)"] == [
            "Put a failed job back on the queue, after `delay` seconds."]
        assert len({b.section for b in blocks if b.heading in ("WORKER_TIMEOUT", "WORKER_RESTART")}) == 2


def test_roles_the_neutraliser_touched_render_as_code() -> None:
    blocks = segment(neutralise("Set :data:`WORKER_TIMEOUT` before ``start()``. See :py:data:`WORKER_RESTART`."))
    assert [b.text for b in blocks] == ["Set `WORKER_TIMEOUT` before `start()`.", "See `WORKER_RESTART`."]


def test_a_question_about_a_setting_quotes_its_definition_from_the_start_with_its_default() -> None:
    text = answer("WORKER_RESTART default?", ("config.rst", neutralise(SETTINGS)))
    assert "**config.rst** [1] · *WORKER_RESTART*" in text
    assert "> Whether a worker restarts after every job." in text
    assert "> Default: `False`" in text
    assert "300" not in text and "retry_job" not in text  # the neighbouring definitions are other sections


def test_a_definition_is_quoted_from_its_first_sentence_though_a_later_one_repeats_the_name() -> None:
    text = answer("What does WORKER_TIMEOUT do?", ("config.rst", neutralise(SETTINGS)))
    assert quoted(text)[0] == "How long a worker may run one job before it is stopped."


def test_a_sentence_shown_by_an_earlier_context_is_skipped_not_a_stop() -> None:
    prose = ("Workers\n=======\n\nWhether a worker restarts after every job is set by ``WORKER_RESTART``.\n"
             "Restarting frees memory that a leaky job kept, but each job then pays the start-up time.\n")
    text = answer("What does WORKER_RESTART default to?", ("workers.rst", prose), ("config.rst", SETTINGS))
    assert text.count("Restarting frees memory that a leaky job kept") == 1
    assert "> Default: `False`" in text.split("**config.rst**")[1]


def test_a_chunk_starting_inside_an_indented_block_keeps_its_indentation_and_reads_as_code() -> None:
    lines = "\n".join(f"        value_{i} = compute({i})" for i in range(60))
    document = f"Lowering the limit helps. Configure it with::\n\n    settings.update(\n{lines}\n    )\n\nDone.\n"
    embedder = LocalMiniLMEmbedder()
    config = ChunkingConfig(max_tokens=120, overlap_tokens=0)
    doc = Document(key="d", title="d", link="", text=document, content_type=ContentType.PROSE)
    chunks = split_document(doc, config, embedder.count_tokens)
    assert len(chunks) > 2
    for chunk in chunks:
        assert document[chunk.start : chunk.start + len(chunk.text)] == chunk.text
        assert embedder.count_tokens(chunk.text) <= config.max_tokens
    assert all(c.text.startswith("    ") for c in chunks[1:])
    joined = join_chunks([c.text for c in chunks])
    kinds = [b.kind for b in segment(joined)]
    assert BlockKind.SENTENCE in kinds and BlockKind.CODE in kinds
    assert not any("value_" in b.text for b in segment(joined) if b.kind is BlockKind.SENTENCE)


def test_a_passage_whose_only_title_is_underlined_with_tildes_is_still_read_as_rest() -> None:
    passage = "Signals\n~~~~~~~\n\n#.  :data:`job_started` is sent first.\n\n.. _next-section:\n\nRetries\n"
    blocks = segment(neutralise(passage))
    assert [b.text for b in blocks if b.kind is BlockKind.ITEM] == ["`job_started` is sent first."]
    assert not any(".. _next-section" in b.text for b in blocks)
