"""Chunks fit the embedder's window (nothing truncated), cover the whole text and carry locators."""

from __future__ import annotations

import re

import pytest

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder
from backend.pipeline.chunking import ChunkingConfig, chunk_id, default_chunking, split_document
from backend.pipeline.ingest_types import ContentType, Document, Segment

EMBEDDER = LocalMiniLMEmbedder()
CONFIG = default_chunking(embedder_max_tokens=EMBEDDER.max_input_tokens)

PROSE = " ".join(
    f"Paragraph {i}: Celery workers consume tasks from the broker, acknowledge them late when asked, and "
    f"retry failures with exponential backoff; routing key {i} sends them to queue q{i % 7}."
    + ("\n\n" if i % 4 == 3 else " ")
    for i in range(120)
)
CODE = "\n".join(
    f"def handler_{i}(payload: dict) -> int:\n    \"\"\"Handle event {i}.\"\"\"\n    total = sum(payload.values())\n"
    f"    return total * {i}\n"
    for i in range(80)
)


def _covered(text: str, chunks: list) -> set[int]:  # type: ignore[type-arg]
    covered: set[int] = set()
    for chunk in chunks:
        assert text[chunk.start : chunk.start + len(chunk.text)] == chunk.text
        covered.update(range(chunk.start, chunk.start + len(chunk.text)))
    return covered


def test_defaults_derive_from_the_embedder_window() -> None:
    assert (CONFIG.max_tokens, CONFIG.overlap_tokens) == (254, 30)
    assert default_chunking(embedder_max_tokens=8191).max_tokens == 512


@pytest.mark.parametrize(("text", "kind", "language"), [
    (PROSE, ContentType.PROSE, ""),
    (CODE, ContentType.CODE, "python"),
    ("# Title\n\n" + PROSE, ContentType.MARKDOWN, ""),
])
def test_no_chunk_exceeds_the_window_and_no_text_is_dropped(text: str, kind: ContentType, language: str) -> None:
    doc = Document(key="k", text=text, title="t", link="https://x.y/", content_type=kind, language=language)
    chunks = split_document(doc, CONFIG, EMBEDDER.count_tokens)
    assert len(chunks) > 5
    # The model reads max_input_tokens including [CLS] and [SEP]: every chunk fits whole.
    assert max(EMBEDDER.count_tokens(c.text) for c in chunks) <= EMBEDDER.max_input_tokens - 2
    non_space = {i for i, ch in enumerate(text) if not ch.isspace()}
    assert non_space <= _covered(text, chunks)


def test_the_reference_designs_2000_character_chunks_would_be_truncated() -> None:
    # What the issue warns about: 2,000 characters of English is ~2x the MiniLM window.
    assert EMBEDDER.count_tokens(PROSE[:2000]) > EMBEDDER.max_input_tokens


def test_code_chunks_know_their_line_ranges() -> None:
    doc = Document(key="a.py", text=CODE, title="a.py", link="", content_type=ContentType.CODE, language="python")
    chunks = split_document(doc, CONFIG, EMBEDDER.count_tokens)
    lines = CODE.split("\n")
    for chunk in chunks:
        first, last = chunk.locator["line_start"], chunk.locator["line_end"]
        assert "\n".join(lines[first - 1 : last]).startswith(chunk.text.split("\n")[0])
        assert chunk.text.rstrip("\n").split("\n")[-1] == lines[last - 1]
    assert chunks[0].text.startswith("def handler_0")


def test_transcript_chunks_start_at_the_right_second() -> None:
    cues = [(float(i * 7), f"Cue number {i} talks about retries and brokers at length.") for i in range(200)]
    text, segments, offset = "", [], 0
    for seconds, cue in cues:
        segments.append(Segment(offset=offset, seconds=seconds))
        text += cue + " "
        offset = len(text)
    doc = Document(key="vid", text=text, title="Talk", link="https://youtu.be/x", segments=tuple(segments))
    for chunk in split_document(doc, CONFIG, EMBEDDER.count_tokens):
        number = int(re.search(r"Cue number (\d+)", chunk.text).group(1))  # type: ignore[union-attr]
        assert chunk.locator["seconds"] in {number * 7, (number - 1) * 7}


def test_pdf_pages_are_kept_and_empty_documents_give_nothing() -> None:
    doc = Document(key="page-3", text=PROSE[:3000], title="Manual", link="m.pdf#page=3", page=3)
    assert {c.locator["page"] for c in split_document(doc, CONFIG, EMBEDDER.count_tokens)} == {3}
    assert split_document(Document(key="e", text="  \n ", title="", link=""), CONFIG, EMBEDDER.count_tokens) == []


def test_chunk_ids_are_deterministic_and_distinct() -> None:
    one = chunk_id(source_id=1, generation=2, doc_key="https://a/", version="v1", index=0)
    assert one == chunk_id(source_id=1, generation=2, doc_key="https://a/", version="v1", index=0)
    others = {chunk_id(source_id=1, generation=3, doc_key="https://a/", version="v1", index=0),
              chunk_id(source_id=1, generation=2, doc_key="https://b/", version="v1", index=0),
              chunk_id(source_id=1, generation=2, doc_key="https://a/", version="v2", index=0),
              chunk_id(source_id=1, generation=2, doc_key="https://a/", version="v1", index=1)}
    assert one not in others and len(others) == 4 and len(one) < 128


def test_unusable_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        ChunkingConfig(max_tokens=100, overlap_tokens=60)


_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def _markdown_guide(sections: int) -> str:
    """A markdown guide in the usual shape: a paragraph, an example in a fenced block, a paragraph after it."""
    parts = ["# Guide\n"]
    for i in range(sections):
        parts.append(f"Step {i} configures the worker pool for queue q{i}; the broker keeps unacknowledged "
                     f"tasks until a worker confirms them, and retries back off exponentially.\n")
        body = "\n".join(f"pool.configure(queue='q{i}', concurrency={j}, prefetch={j * 2})"
                         for j in range(1, 4 + i % 5))
        parts.append(f"```python\n{body}\n```\n")
        parts.append(f"After step {i}, restart the workers so that every one of them reads the new settings.\n")
    return "\n".join(parts)


def test_a_code_blocks_closing_fence_stays_with_its_code_not_the_next_chunk() -> None:
    text = _markdown_guide(60)
    doc = Document(key="guide.md", text=text, title="Guide", link="", content_type=ContentType.MARKDOWN)
    chunks = split_document(doc, CONFIG, EMBEDDER.count_tokens)
    assert len(chunks) > 10
    opened_before = [len(_FENCE_LINE.findall(text[: c.start])) % 2 for c in chunks]
    # No chunk starts with the fence that closes a block begun in the chunk before it ...
    assert not [c for c, odd in zip(chunks, opened_before, strict=True) if odd and _FENCE_LINE.match(c.text)]
    # ... and no chunk ends inside a block (each block here fits in a chunk): it ends with the fence.
    assert all(len(_FENCE_LINE.findall(c.text)) % 2 == 0 for c in chunks)
    assert all(EMBEDDER.count_tokens(c.text) <= CONFIG.max_tokens for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert _covered(text, chunks) >= {i for i, ch in enumerate(text) if not ch.isspace()}


def test_without_the_move_langchain_leaves_the_closing_fence_to_the_next_chunk() -> None:
    """Why the move exists: the markdown separators cut before "```\\n", a closing fence included."""
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    text = _markdown_guide(60)
    splitter = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=CONFIG.max_tokens, chunk_overlap=CONFIG.overlap_tokens,
        length_function=EMBEDDER.count_tokens)
    assert any(piece.startswith("```\n") for piece in splitter.split_text(text))


def test_a_closing_fence_the_splitter_left_alone_is_not_dropped_with_the_short_pieces() -> None:
    """A block longer than a chunk, then a heading: the splitter cuts the heading off first and the closing
    fence becomes a piece of its own, too short to keep; it must end the block's last chunk instead."""
    code = "\n".join(f"console.table(rows[{i}], ['name', 'size', 'owner', 'group']);  // row {i}" for i in range(40))
    text = f"# Console\n\nPrint rows as a table:\n\n```js\n{code}\n```\n\n### Timers\n\nStart a timer with a label.\n"
    doc = Document(key="console.md", text=text, title="Console", link="", content_type=ContentType.MARKDOWN)
    chunks = split_document(doc, CONFIG, EMBEDDER.count_tokens)
    last_code = max(i for i, c in enumerate(chunks) if "// row 39" in c.text)
    assert chunks[last_code].text.endswith("// row 39\n```")
    assert chunks[-1].text.startswith("### Timers")


def _commented_guide(sections: int) -> str:
    """Sections of prose, each with a Python example whose lines are commented: "# …" reads as a heading to
    langchain's markdown separators."""
    parts = []
    for i in range(sections):
        parts.append(f"## Step {i}\n\nStep {i} sets the pool for queue q{i}; the broker keeps unacknowledged tasks "
                     f"until a worker confirms them, and retries back off exponentially when the broker is down.\n")
        body = "\n".join(f"# Option {j} of step {i}: prefetch {j * 2} tasks\npool.configure(queue='q{i}', "
                         f"concurrency={j}, prefetch={j * 2})" for j in range(1, 3 + i % 3))
        parts.append(f"```python\n{body}\n```\n")
    return "\n".join(parts)


def test_chunks_are_not_cut_at_code_comments_and_one_starting_inside_code_reads_as_code() -> None:
    from backend.pipeline.code_fences import code_blocks
    from backend.pipeline.contexts import join_chunks

    text = _commented_guide(40)
    doc = Document(key="guide.md", text=text, title="Guide", link="", content_type=ContentType.MARKDOWN)
    chunks = split_document(doc, CONFIG, EMBEDDER.count_tokens)
    blocks = code_blocks(text)
    inside = [c for c in chunks if any(b.start <= c.start < b.end for b in blocks)]
    # langchain alone cuts before "# Option …" lines: most chunks started inside an example.
    assert len(inside) <= len(chunks) // 10
    for chunk in chunks:
        body = chunk.text.removeprefix("```python\n") if chunk in inside else chunk.text
        assert body == text[chunk.start : chunk.start + len(body)]
        assert EMBEDDER.count_tokens(chunk.text) <= CONFIG.max_tokens
    assert all(c.text.startswith("```python\n") for c in inside)
    assert join_chunks([c.text for c in chunks]).split() == text.split()


def test_without_the_mask_langchain_cuts_examples_at_their_comments() -> None:
    """Why code comments are masked: the markdown separators take "# Option …" inside code for a heading."""
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=CONFIG.max_tokens, chunk_overlap=CONFIG.overlap_tokens,
        length_function=EMBEDDER.count_tokens)
    pieces = splitter.split_text(_commented_guide(40))
    assert sum(piece.startswith("# Option") for piece in pieces) > len(pieces) // 3
