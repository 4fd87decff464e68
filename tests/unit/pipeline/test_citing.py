"""Citation markers: renumbered in order of first citation, the same whether streamed or whole, code untouched."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.pipeline.citing import CitationRenumberer, arranged, citations, renumber


def streamed(text: str, count: int, cuts: list[int]) -> tuple[str, list[int]]:
    renumberer, out, last = CitationRenumberer(count), [], 0
    for cut in sorted(c % (len(text) + 1) for c in cuts):
        out.append(renumberer.feed(text[last:cut]))
        last = max(last, cut)
    out.append(renumberer.feed(text[last:]) + renumberer.finish())
    return "".join(out), renumberer.order


def test_cited_sources_become_one_to_k_in_order_of_first_citation() -> None:
    text, order = renumber("Retries use self.retry() [3]. The broker is Redis [1][3], see also [1, 3].", 4)
    assert text == "Retries use self.retry() [1]. The broker is Redis [2][1], see also [2, 1]."
    assert order == [3, 1] and arranged(order, 4) == [3, 1, 2, 4]


def test_code_links_escapes_and_unknown_numbers_are_left_alone() -> None:
    source = ("Use `items[2]` [2].\n```python\nvalue = row[1]  # [1]\n```\n~~~\n[1]\n~~~\n"
              "A [link](http://x) [1](http://y), \\[1] and [7] stay; ``a ` [1]`` too. [1]")
    text, order = renumber(source, 3)
    assert text == source.replace("` [2].", "` [1].").removesuffix("[1]") + "[2]"
    assert order == [2, 1]


def test_citations_are_where_the_renumbering_finds_markers_even_when_streamed() -> None:
    source = "Use `items[2]` [2].\n```python\nrow[1]\n```\nSee [1, 3] and [7]."
    assert citations(source, 3) == [(15, 18, [2]), (45, 51, [1, 3])]
    assert [source[start:end] for start, end, _ in citations(source, 3)] == ["[2]", "[1, 3]"]
    renumberer = CitationRenumberer(3)
    for piece in (source[:16], source[16:40], source[40:]):
        renumberer.feed(piece)
    renumberer.finish()
    assert renumberer.markers == citations(source, 3)


def test_an_unclosed_backtick_is_literal_and_does_not_hide_the_markers_after_it() -> None:
    assert renumber("a ` b [2]", 2) == ("a ` b [1]", [2])
    assert renumber("a ` b\n\nc [2] `", 2) == ("a ` b\n\nc [1] `", [2])


def test_an_answer_citing_nothing_keeps_its_text_and_lists_every_reference_as_retrieved() -> None:
    assert renumber("I could not find it.", 3) == ("I could not find it.", [])
    assert arranged([], 3) == [1, 2, 3]


def test_the_offline_answerers_quoted_passages_are_cited_in_order() -> None:
    text = "*notice*\n\n**Retrying** [1]\n> Call self.retry().\n\n**Broker** [2]\n> Redis.\n\n"
    assert renumber(text, 5) == (text, [1, 2])


PIECES = st.sampled_from(["[", "]", "1", "2", "3", "9", ",", " ", "(", ")", "`", "``", "```", "~~~", "\n",
                          "\n\n", "\\", "word", "[1]", "[2, 3]", "x[1]"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=40), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_streaming_gives_the_same_text_as_renumbering_the_whole(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    whole, order = renumber(text, 3)
    assert streamed(text, 3, cuts) == (whole, order)
    assert sorted(order) == sorted(set(order)) and all(1 <= n <= 3 for n in order)
    # Renumbered text is already in citation order: renumbering it again changes nothing.
    assert renumber(whole, 3) == (whole, list(range(1, len(order) + 1)))
