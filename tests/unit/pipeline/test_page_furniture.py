"""Running headers, footers and page numbers leave a paged document's text; everything else stays."""

from __future__ import annotations

from backend.pipeline.page_furniture import strip_furniture


def _manual() -> list[str]:
    """Six pages laid out as a GNU manual: contents (roman numbered), then chapters with running heads that end
    with the printed page number (page 3 is printed 1), a chapter's first page with only its number at the top."""
    return [
        "Libtasn1\nA library for ASN.1 structures",
        "i\nTable of Contents\n1 Introduction . . . 1",
        "1\n1 Introduction\nLibtasn1 handles ASN.1 structures and their DER encoding.",
        "Chapter 1: Introduction 2\nIt runs on any C89 system.\nSee chapter 3 for the functions on page 4",
        "Chapter 1: Introduction 3\nThe REAL type is not handled.",
        "4\n3 Function reference\nasn1_der_decoding fills a structure from DER data.",
    ]


def test_running_heads_and_page_numbers_go_and_the_text_stays() -> None:
    pages = strip_furniture(_manual())
    assert pages[0] == "Libtasn1\nA library for ASN.1 structures"
    assert pages[1] == "Table of Contents\n1 Introduction . . . 1"
    assert pages[2].startswith("1 Introduction\n")
    assert pages[3] == "It runs on any C89 system.\nSee chapter 3 for the functions on page 4"
    assert pages[4] == "The REAL type is not handled."
    assert pages[5].startswith("3 Function reference\n")


def test_a_title_repeated_at_the_top_of_every_page_goes_but_stays_on_the_first() -> None:
    pages = [f"Shared Database\nSection {n} text about globs.\n{n}" for n in range(1, 8)]
    stripped = strip_furniture(pages)
    assert stripped[0] == "Shared Database\nSection 1 text about globs."
    assert all(page == f"Section {n} text about globs." for n, page in enumerate(stripped[1:], start=2))


def test_a_phrase_repeated_on_a_few_pages_or_inside_them_is_content() -> None:
    pages = [f"Step {n}: open the valve.\nReturns: 0 on success.\nNotes for step {n}." for n in range(1, 31)]
    pages[4] = "Returns: 0 on success.\n" + pages[4]
    pages[9] = "Returns: 0 on success.\n" + pages[9]  # at the top of 2 pages of 30: not a running head
    stripped = strip_furniture(pages)
    assert stripped[4].startswith("Returns: 0 on success.\n") and stripped[9].startswith("Returns: 0 on success.\n")
    assert all("Returns: 0 on success." in page for page in stripped)


def test_only_well_formed_page_labels_are_labels() -> None:
    pages = [f"Notes {n}\n{'mild' if n == 4 else 'xiv'}\nThe valve opens at step {n}." for n in range(1, 8)]
    stripped = strip_furniture(pages)
    assert stripped[3] == "mild\nThe valve opens at step 4."  # a word of Roman-numeral letters is no page label
    assert stripped[0] == "The valve opens at step 1."  # "Notes 1" ends with the page number, then "xiv" is one


def test_short_documents_are_left_as_they_are() -> None:
    assert strip_furniture(["Title\nText\n1", "Title\nMore\n2"]) == ["Title\nText\n1", "Title\nMore\n2"]
