"""The summary tree's shape, re-use by hash, budget stop and splitting, with a scripted summariser."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from backend.pipeline.llm_types import Completion, Flow, Usage
from backend.pipeline.summary_tree import (
    Node,
    TokenBudget,
    TreeBuilder,
    TreeConfig,
    clip,
    split_pieces,
    tree_size,
)

CONFIG = TreeConfig(max_length=1000, overlap=50, min_length=200, summary_length=240, fingerprint="scripted")


class Scripted:
    """Summarises by naming its inputs, so a test can read the tree's shape from the texts."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, texts: Sequence[str], max_chars: int) -> Completion:
        self.calls.append(tuple(texts))
        text = "S(" + ",".join(t.split()[0] for t in texts) + ")"
        return Completion(text=text, usage=Usage(model="scripted", flow=Flow.SUMMARIZE, prompt_tokens=100,
                                                 completion_tokens=20))


def build(pieces: list[str], store: dict[str, Node] | None = None, budget: int = 10**9) -> tuple[Scripted, object]:
    summarise, known = Scripted(), store if store is not None else {}

    def stored(node: Node) -> None:
        known[node.content_hash] = node

    builder = TreeBuilder(config=CONFIG, summarise=summarise, known=known.get, stored=stored,
                          budget=TokenBudget(limit=budget), workers=2)
    return summarise, builder.leaves(pieces)


def test_fan_in_is_as_many_summaries_as_fit() -> None:
    assert CONFIG.fan_in == 4  # 4 × 240 + 3 joiners ≤ 1000
    with pytest.raises(ValueError):
        TreeConfig(max_length=100, overlap=10, min_length=20, summary_length=60)


@pytest.mark.parametrize(("pieces", "layers", "calls"), [
    (1, [1], 1),            # one piece: its summary is the source's
    (4, [4, 1], 5),         # one merge reads all four
    (5, [5, 2, 1], 7),      # the fifth is carried up alone, then merged with the first merge
    (6, [6, 3, 1], 8),         # two pieces carried up beside the first merge: two merges, not three
    (7, [7, 4, 1], 9),
    (17, [17, 5, 2, 1], 23),
])
def test_tree_shape_and_calls(pieces: int, layers: list[int], calls: int) -> None:
    summarise, run = build([f"p{i} text" for i in range(pieces)])
    assert [len(layer) for layer in run.layers] == layers
    assert run.complete and run.root is not None
    assert len(summarise.calls) == calls == tree_size(pieces, CONFIG.fan_in)
    assert all(len(call) > 1 for call in summarise.calls[pieces:]), "a merge never re-summarises one summary"
    assert len(summarise.calls) - pieces == -(-(pieces - 1) // (CONFIG.fan_in - 1)), "the fewest merges possible"


def test_reading_order_is_kept() -> None:
    _, run = build([f"p{i} text" for i in range(5)])
    assert [n.text for n in run.layers[1]] == ["S(S(p0),S(p1),S(p2),S(p3))", "S(p4)"]
    assert run.root is not None and run.root.text == "S(S(S(p0),S(p1),S(p2),S(p3)),S(p4))"
    assert run.layers[1][1] is run.layers[0][4], "the lone node is carried up, not copied"
    assert [n.text for n in run.layers[0]] == [f"S(p{i})" for i in range(5)]


def test_an_edit_to_one_piece_rebuilds_only_its_path() -> None:
    pieces = [f"p{i} text" for i in range(17)]
    store: dict[str, Node] = {}
    build(pieces, store)
    pieces[9] = "p9 changed text"
    summarise, run = build(pieces, store)
    # Its leaf, its level-1 merge, the level-2 merge above that, and the root.
    assert len(summarise.calls) == 4
    assert summarise.calls[0] == ("p9 changed text",)
    assert run.complete


def test_same_text_again_makes_no_call() -> None:
    pieces = [f"p{i} text" for i in range(6)]
    store: dict[str, Node] = {}
    build(pieces, store)
    summarise, run = build(pieces, store)
    assert summarise.calls == [] and run.root is not None and all(n.reused for n in run.nodes())


def test_budget_stops_the_tree_and_keeps_what_it_made() -> None:
    # Each leaf call is estimated at (len + 240) // 4 ≈ 62 tokens and costs 120: three fit in 400.
    summarise, run = build([f"p{i} text" for i in range(8)], budget=400)
    assert not run.complete and run.root is None
    assert 1 <= len(summarise.calls) < 8
    assert len(run.layers[0]) == len(summarise.calls)


def test_split_one_piece_exactly_at_the_limit() -> None:
    text = ("word " * 200)[:1000]
    assert len(split_pieces([text], CONFIG)) == 1
    assert len(split_pieces([text + " more" * 60], CONFIG)) == 2
    # A tail shorter than min_length is not a piece of its own: it joins the piece before.
    assert len(split_pieces([text + " more words here"], CONFIG)) == 1


def test_short_tail_joins_the_piece_before() -> None:
    paragraphs = ["A" * 600, "B" * 350, "C" * 100]
    pieces = split_pieces(["\n\n".join(paragraphs)], CONFIG)
    assert len(pieces) == 1 or all(len(p) >= CONFIG.min_length for p in pieces)
    long = split_pieces(["\n\n".join(["X" * 900, "Y" * 900, "Z" * 120])], CONFIG)
    assert len(long) == 2 and long[-1].endswith("Z" * 120) and long[-1].count("Z") == 120


def test_documents_are_kept_whole_where_they_fit() -> None:
    pieces = split_pieces(["first document " * 20, "second document " * 20, "third " * 10], CONFIG)
    assert all(len(p) <= CONFIG.max_length for p in pieces)
    assert "first document" in pieces[0]


def test_clip_cuts_after_a_whole_sentence() -> None:
    assert clip("One two three. Four five six seven.", 25) == "One two three."
    assert clip("One two. Three four five six seven eight.", 30) == "One two. Three four five six"
    assert clip("short", 20) == "short"
