"""PypdfExtractor on real, hand-written PDFs: exact text per page, citations, and every refusal with its message."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pypdf import PdfReader

from backend.adapters.pdf.extractor import MIB, PypdfExtractor, clean_text
from backend.pipeline.budget import BudgetExceeded, BudgetLimits, IngestBudget
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ingest_types import ContentType, Document
from backend.pipeline.ports import PdfExtractor
from tests.fakes import pdfs

LINK = "https://files.example.org/manual.pdf"
THREE_PAGES: list[pdfs.Page] = [
    ["Installing OpenGuru", "Run the installer (as root) and wait."],
    [],
    ["Troubleshooting", "Check C:\\logs for errors."],
]


def _extract(path: Path, **limits: int) -> list[Document]:
    extractor: PdfExtractor = PypdfExtractor(**limits)
    return extractor.extract(str(path), title="Manual", link=LINK)


def _refusal(path: Path, **limits: int) -> str:
    with pytest.raises(PermanentServiceError) as caught:
        _extract(path, **limits)
    return str(caught.value)


def test_three_pages_exact_text_page_numbers_and_links(tmp_path: Path) -> None:
    documents = _extract(pdfs.write_pdf(tmp_path / "manual.pdf", THREE_PAGES))

    assert documents == [
        Document(
            key="page-1",
            text="Installing OpenGuru\nRun the installer (as root) and wait.",
            title="Manual — page 1",
            link=f"{LINK}#page=1",
            content_type=ContentType.PROSE,
            page=1,
        ),
        Document(
            key="page-3",
            text="Troubleshooting\nCheck C:\\logs for errors.",
            title="Manual — page 3",
            link=f"{LINK}#page=3",
            content_type=ContentType.PROSE,
            page=3,
        ),
    ]


def test_existing_fragment_is_replaced_and_empty_title_falls_back_to_file_name(tmp_path: Path) -> None:
    path = pdfs.write_pdf(tmp_path / "guide.pdf", [["Only page"]])

    [document] = PypdfExtractor().extract(str(path), title="", link=f"{LINK}#section-2")

    assert document.link == f"{LINK}#page=1"
    assert document.title == "guide.pdf — page 1"


def test_hyphenated_line_breaks_are_joined_and_spaces_collapsed(tmp_path: Path) -> None:
    pages: list[pdfs.Page] = [["The docu-", "ment explains   the   set-", "up of Jean-", "Paul's server."]]

    [document] = _extract(pdfs.write_pdf(tmp_path / "hyphens.pdf", pages))

    assert document.text == "The document explains the setup of Jean-Paul's server."


def test_owner_password_only_file_is_read(tmp_path: Path) -> None:
    path = pdfs.write_owner_only_pdf(tmp_path / "owner.pdf", [["Printing is restricted", "but reading is not."]])

    [document] = _extract(path)

    assert document.text == "Printing is restricted\nbut reading is not."


def test_user_password_is_refused(tmp_path: Path) -> None:
    message = _refusal(pdfs.write_encrypted_pdf(tmp_path / "locked.pdf", [["secret"]]))

    assert message.startswith('"Manual" is encrypted with a password; remove the password')


def test_scanned_pdf_is_refused(tmp_path: Path) -> None:
    message = _refusal(pdfs.write_scanned_pdf(tmp_path / "scan.pdf"))

    assert message == '"Manual" has no text layer; it looks scanned. OCR is not supported yet.'


def test_blank_pages_only_count_as_scanned(tmp_path: Path) -> None:
    message = _refusal(pdfs.write_pdf(tmp_path / "blank.pdf", [[], ["   "]]))

    assert "has no text layer" in message


def test_zero_pages_are_refused(tmp_path: Path) -> None:
    assert _refusal(pdfs.write_zero_page_pdf(tmp_path / "empty.pdf")) == '"Manual" has no pages.'


@pytest.mark.parametrize(
    ("write", "detail"),
    [
        (lambda p: pdfs.write_truncated_pdf(p, THREE_PAGES), "(PdfStreamError: Stream has ended unexpectedly)"),
        (pdfs.write_headed_garbage_pdf, "(PdfReadError: startxref not found)"),
        (pdfs.write_garbage_pdf, "(no %PDF- header)"),
        (pdfs.write_text_as_pdf, "(no %PDF- header; it is a text file)"),
        (lambda p: p.write_bytes(b""), "(the file is empty)"),
        (pdfs.write_deeply_nested_pdf, "(RecursionError: maximum recursion depth exceeded"),
    ],
    ids=["truncated", "header-then-garbage", "garbage", "text-renamed", "empty-file", "deeply-nested"],
)
def test_malformed_files_are_refused_with_the_reason(
    tmp_path: Path, write: Callable[[Path], object], detail: str
) -> None:
    path = tmp_path / "bad.pdf"
    write(path)

    message = _refusal(path)

    assert message.startswith('"Manual" is not a valid PDF ')
    assert detail in message
    assert message.endswith("the file may be damaged or incomplete. Export or upload it again.")


def test_decompression_bomb_stops_at_pypdf_limit(tmp_path: Path) -> None:
    path = pdfs.write_zip_bomb_pdf(tmp_path / "bomb.pdf", inflated_mb=80)
    assert path.stat().st_size < 200_000

    message = _refusal(path)

    assert message.startswith('"Manual" exceeds a safety limit of the PDF reader (LimitReachedError:')
    assert message.endswith("it is malformed or a decompression bomb.")


def _budget(max_chars: int, clock: Callable[[], float] = time.monotonic) -> IngestBudget:
    return IngestBudget(BudgetLimits(max_chars=max_chars, max_chunks=10**6, max_seconds=60, max_memory_mb=10**6),
                        what="this PDF", clock=clock)


def test_text_bomb_is_tiny_on_disk_and_holds_the_text_it_says() -> None:
    data = pdfs.text_bomb_pdf_bytes(chars=200_000, pages=4)
    assert len(data) < 5_000
    reader = PdfReader(io.BytesIO(data))
    assert sum(len(page.extract_text()) for page in reader.pages) >= 190_000


@pytest.mark.parametrize("pages", [20, 1], ids=["many-pages", "one-page"])
def test_a_text_bomb_stops_at_the_text_bound_mid_page(tmp_path: Path, pages: int) -> None:
    path = pdfs.write_text_bomb_pdf(tmp_path / "bomb.pdf", chars=8_000_000, pages=pages)
    started = time.process_time()
    with pytest.raises(BudgetExceeded) as caught:
        PypdfExtractor().extract(str(path), title="Manual", link=LINK, budget=_budget(1_000_000))
    # All 8 MB on one page take pypdf ~22 s of CPU; the bound is checked as the page's text comes out, so one
    # page stops after its first million characters (~1.5 s, most of it parsing the stream). CPU time, not wall
    # time: beside three other test processes on two cores the wall clock once read 16 s.
    assert time.process_time() - started < 15
    assert str(caught.value) == ("stopped: this PDF holds more than 1,000,000 characters of text "
                                 "(OPENGURU_SOURCE_MAX_CHARS)")


def test_a_pdf_within_the_text_bound_reads_as_without_a_budget(tmp_path: Path) -> None:
    path = pdfs.write_pdf(tmp_path / "manual.pdf", THREE_PAGES)
    bounded = PypdfExtractor().extract(str(path), title="Manual", link=LINK, budget=_budget(1000))
    assert bounded == _extract(path)


def test_a_slow_pdf_stops_at_the_time_bound_between_and_inside_pages(tmp_path: Path) -> None:
    path = pdfs.write_text_bomb_pdf(tmp_path / "bomb.pdf", chars=400_000, pages=1)
    ticks = iter(range(0, 10**6, 10))  # every look at the clock is ten seconds later

    with pytest.raises(BudgetExceeded, match=r"took longer than 60 s \(OPENGURU_SOURCE_MAX_SECONDS\)"):
        PypdfExtractor().extract(str(path), title="Manual", link=LINK,
                                 budget=_budget(10**9, clock=lambda: float(next(ticks))))


def test_size_cap_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as handle:
        handle.truncate(230 * MIB)  # sparse, so it takes no disk space

    assert _refusal(path) == '"Manual" is 230 MB; the limit is 100 MB.'


def test_size_cap_small_limits_read_naturally(tmp_path: Path) -> None:
    path = pdfs.write_pdf(tmp_path / "manual.pdf", THREE_PAGES)

    message = _refusal(path, max_bytes=100)

    assert message == f'"Manual" is {path.stat().st_size / 1024:.1f} KB; the limit is 100 bytes.'


def test_page_cap(tmp_path: Path) -> None:
    path = pdfs.write_pdf(tmp_path / "long.pdf", [[f"Section {n} body"] for n in range(1, 6)])

    assert _refusal(path, max_pages=3) == '"Manual" has 5 pages; the limit is 3.'
    assert [d.page for d in _extract(path, max_pages=5)] == [1, 2, 3, 4, 5]


def test_missing_file_and_directory_are_refused(tmp_path: Path) -> None:
    assert "is missing" in _refusal(tmp_path / "gone.pdf")
    assert "is missing" in _refusal(tmp_path)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("First paragraph line\n\n\n\nSecond  paragraph", "First paragraph line\n\nSecond paragraph"),
        ("  indented\t\ttabs \xa0and nbsp  \n", "indented tabs and nbsp"),
        ("multi-\nline docu-\n  ment", "multiline document"),
        ("Jean-\nPaul and 2019-\n2020", "Jean-Paul and 2019-\n2020"),
        ("soft\xad\nhyphen and hid\xadden", "softhyphen and hidden"),
        ("nul\x00 bytes\r\nand CR\rlines\fpage", "nul bytes\nand CR\nlines\n\npage"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_running_heads_and_page_numbers_are_not_part_of_the_text(tmp_path: Path) -> None:
    pages = [[f"Field Guide {n}", f"Birds of page {n} nest in reeds.", f"- {n} -"] for n in range(1, 6)]
    documents = _extract(pdfs.write_pdf(tmp_path / "guide.pdf", pages))
    assert [d.text for d in documents] == [f"Birds of page {n} nest in reeds." for n in range(1, 6)]
    assert [d.page for d in documents] == [1, 2, 3, 4, 5]
