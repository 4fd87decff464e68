"""Fenced code in markdown chunks: blocks found, code comments masked from the splitter, chunks reopened."""

from __future__ import annotations

from backend.pipeline.code_fences import NO_BREAK_SPACE, code_blocks, comments_masked, open_fence, reopened, reopening

DOC = (
    "# Timeouts\n\n"
    "Set one for every request:\n\n"
    "```python\n"
    "# A client with a 60s timeout for connecting, and a 10s timeout elsewhere.\n"
    "timeout = httpx.Timeout(10.0, connect=60.0)\n"
    "## not a heading either\n"
    "```\n\n"
    "## Pools\n\n"
    "~~~~\n"
    "#no space: left as it is\n"
)


def test_blocks_are_found_with_their_opening_line_and_an_unclosed_one_runs_to_the_end() -> None:
    blocks = code_blocks(DOC)
    assert [b.opening for b in blocks] == ["```python", "~~~~"]
    assert DOC[blocks[0].start : blocks[0].end].startswith("# A client")
    assert DOC[blocks[0].start : blocks[0].end].endswith("either\n")
    assert blocks[1].end == len(DOC)


def test_only_code_comments_are_masked_and_nothing_moves() -> None:
    masked = comments_masked(DOC, code_blocks(DOC))
    assert len(masked) == len(DOC)
    assert masked.startswith("# Timeouts")  # a real heading still cuts
    assert "\n## Pools" in masked
    assert f"\n#{NO_BREAK_SPACE}A client" in masked and f"\n##{NO_BREAK_SPACE}not a heading" in masked
    assert [i for i, (a, b) in enumerate(zip(DOC, masked, strict=True)) if a != b] == [
        DOC.index("# A client") + 1, DOC.index("## not") + 2]


def test_a_chunk_starting_inside_a_block_is_reopened_and_its_join_drops_the_fence_again() -> None:
    blocks = code_blocks(DOC)
    start = DOC.index("timeout = httpx")
    chunk = DOC[start : DOC.index("## Pools")]
    assert reopened(chunk, start, blocks) == "```python\n" + chunk
    assert reopened("# Timeouts", 0, blocks) == "# Timeouts"
    before = DOC[:start]
    assert open_fence(before) is not None
    assert reopening(before, "```python\n" + chunk) == len("```python\n")
    assert reopening(DOC[: DOC.index("## Pools")], "```python\nx = 1\n") == 0  # the block before was closed
