"""PDF text extraction with langchain-community's PyPDFLoader (pypdf), one document per page with text."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from urllib.parse import urldefrag

import pypdf
from langchain_community.document_loaders.pdf import PyPDFLoader
from langchain_core.documents import Document as LoaderDocument
from pypdf import PasswordType
from pypdf.errors import DependencyError, LimitReachedError, PyPdfError
from pypdf.errors import DeprecationError as PypdfDeprecationError

from backend.pipeline.budget import IngestBudget, TextMeter
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ingest_types import ContentType, Document
from backend.pipeline.page_furniture import strip_furniture

MIB = 1024 * 1024
_HEADER_WINDOW = 1024
"""Readers accept %PDF- anywhere in the first 1024 bytes (some files start with junk from mail gateways)."""

# What pypdf 7.1 raised beyond its own PyPdfError when fuzzing ~50,000 mutated PDFs and hand-made
# pathological ones: TypeError/AttributeError/OverflowError (broken xref tables), NotImplementedError
# (unknown filter or crypt method), AssertionError (object parser), ValueError (bad RC4 key size, from
# cryptography), RecursionError (deeply nested arrays in a content stream), DeprecationError (a removed
# filter abbreviation). KeyError and IndexError guard pypdf's many unchecked dictionary and array look-ups;
# DependencyError is AES without the `cryptography` package. Anything else is a bug worth a traceback.
_READ_ERRORS: tuple[type[BaseException], ...] = (
    PyPdfError,
    PypdfDeprecationError,
    DependencyError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
    NotImplementedError,
    OverflowError,
    RecursionError,
)

# Decompression is bounded by pypdf itself, not here: its Configuration caps every stream's decoded output
# (zlib_maximum_output_length, lzw_/run_length_/brotli_/jbig2_maximum_output_length = 75_000_000 bytes;
# the legacy constant is pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH), the accumulated decoding work per stream
# (stream_decoding_work_maximum_length = 300_000_000), declared /Length (maximum_declared_stream_length =
# 75_000_000), the page tree (page_tree_maximum_entries = 100_000) and ToUnicode maps, raising
# LimitReachedError, which becomes a PermanentServiceError below. A 190 KB file that inflates to 200 MB
# stops at 75 MB. Together with max_bytes this keeps one worker's memory in the hundreds of MB.


class PypdfExtractor:
    """PdfExtractor over pypdf: checks size, structure, encryption and page count, then reads text per page.

    Each page with text becomes a Document: key "page-<n>", page n (1-based, physical page, not the printed
    label, because `#page=<n>` in viewers means the physical page), link "<link>#page=<n>", title
    "<title> — page <n>" so a reference list is readable without knowing about the page field, and text
    cleaned by `clean_text`, without the running headers, footers and page numbers (`strip_furniture`).
    Pages without text are skipped; a file with no text at all is refused as scanned.
    The whole file is refused on any read error (PyPDFLoader yields pages from one generator, so a page that
    fails ends the iteration).
    """

    def __init__(self, *, max_bytes: int = 100 * MIB, max_pages: int = 2000) -> None:
        self.max_bytes = max_bytes
        self.max_pages = max_pages

    def extract(self, path: str, *, title: str, link: str, budget: IngestBudget | None = None) -> list[Document]:
        name = title or os.path.basename(path)
        self._check_file(path, name)
        try:
            self._check_structure(path, name)
            pages = self._pages(path, budget)
        except LimitReachedError as exc:
            raise PermanentServiceError(
                f'"{name}" exceeds a safety limit of the PDF reader ({_detail(exc)}); it is malformed or a '
                "decompression bomb."
            ) from exc
        except _READ_ERRORS as exc:
            raise _invalid(name, _detail(exc)) from exc
        documents = list(_to_documents(pages, title=name, link=link))
        if not documents:
            raise PermanentServiceError(f'"{name}" has no text layer; it looks scanned. OCR is not supported yet.')
        return documents

    @staticmethod
    def _pages(path: str, budget: IngestBudget | None) -> list[LoaderDocument]:
        """Page by page, with the budget's text bound counted inside each page as pypdf emits its text.

        A 39 KB file can hold 8 MB of text, and pypdf's time on one page grows faster than its text: 8 MB on
        one page took 22 s, the first 2 MB of it 2.7 s. The visitor sees every fragment before pypdf joins
        them, so raising there stops the page mid-way; time and memory are checked there and between pages.
        """
        if budget is None:
            return list(PyPDFLoader(path).lazy_load())
        meter = TextMeter(budget)

        def count(text: str, *_args: object) -> None:
            meter.add(len(text))

        pages = []
        for page in PyPDFLoader(path, extraction_kwargs={"visitor_text": count}).lazy_load():
            pages.append(page)
            budget.check()
        return pages

    def _check_file(self, path: str, name: str) -> None:
        """Size and header, before any parsing; also keeps PyPDFLoader from treating a URL string as a download."""
        if not os.path.isfile(path):
            raise PermanentServiceError(f'The file of "{name}" is missing ({path}); upload it again.')
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as handle:
                head = handle.read(_HEADER_WINDOW)
        except OSError as exc:
            raise PermanentServiceError(f'"{name}" cannot be read ({exc.strerror or exc}).') from exc
        if size > self.max_bytes:
            raise PermanentServiceError(f'"{name}" is {_human_size(size)}; the limit is {_human_size(self.max_bytes)}.')
        if b"%PDF-" not in head:
            raise _invalid(name, _header_detail(head))

    def _check_structure(self, path: str, name: str) -> None:
        """Encryption and page count with pypdf directly: PyPDFLoader only reports encryption as an error
        raised mid-iteration ("File has not been decrypted") and counts pages only after extracting them all.
        """
        reader = pypdf.PdfReader(path)
        # pypdf already tried the empty user password; owner-password-only files open that way and are read.
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise PermanentServiceError(
                f'"{name}" is encrypted with a password; remove the password (for example by printing it to a '
                "new PDF) and upload it again."
            )
        count = len(reader.pages)
        if count == 0:
            raise PermanentServiceError(f'"{name}" has no pages.')
        if count > self.max_pages:
            raise PermanentServiceError(f'"{name}" has {count:,} pages; the limit is {self.max_pages:,}.')


def _to_documents(pages: Sequence[LoaderDocument], *, title: str, link: str) -> Iterable[Document]:
    base, _fragment = urldefrag(link)
    texts = strip_furniture([clean_text(page.page_content) for page in pages])
    for index, (page, text) in enumerate(zip(pages, texts, strict=True)):
        number = int(page.metadata.get("page", index)) + 1
        if text:
            yield Document(
                key=f"page-{number}",
                text=text,
                title=f"{title} — page {number}",
                link=f"{base}#page={number}",
                content_type=ContentType.PROSE,
                page=number,
            )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u200b\ufeff]")
_WIDE_SPACE = re.compile(r"[\t\xa0\u2000-\u200a\u202f\u205f\u3000]")
_SPACES = re.compile(r" {2,}")
_HYPHEN_BREAK = re.compile(r"([^\W\d_])-\n([^\W\d_])")
_BLANK_LINES = re.compile(r"\n{3,}")


def clean_text(text: str) -> str:
    """Whitespace-clean one page: collapse spaces, join hyphenated line breaks, keep lines and paragraph breaks.

    A hyphen at a line end followed by a lowercase letter is a word split by the layout ("docu-\\nment" ->
    "document"); before a capital it is a real hyphen and stays ("Jean-\\nPaul" -> "Jean-Paul"). Soft hyphens
    are invisible break hints and always go. Line breaks stay (lists and tables keep their shape; splitters
    and embedders treat them as spaces); blank lines collapse to one paragraph break.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = _CONTROL.sub("", text)
    text = _WIDE_SPACE.sub(" ", text)
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    text = text.replace("\xad\n", "").replace("\xad", "")
    text = _HYPHEN_BREAK.sub(_join_hyphenated, text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def _join_hyphenated(match: re.Match[str]) -> str:
    before, after = match.group(1), match.group(2)
    return before + after if after.islower() else f"{before}-{after}"


def _invalid(name: str, detail: str) -> PermanentServiceError:
    return PermanentServiceError(
        f'"{name}" is not a valid PDF ({detail}); the file may be damaged or incomplete. Export or upload it again.'
    )


def _detail(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _header_detail(head: bytes) -> str:
    if not head:
        return "the file is empty"
    sample = head.decode("utf-8", errors="replace")
    # One undecodable character is allowed: the window may cut a multi-byte character in half.
    odd = sum(1 for ch in sample if ch == "\ufffd" or not (ch.isprintable() or ch in "\n\r\t"))
    return "no %PDF- header; it is a text file" if odd <= 1 else "no %PDF- header"


def _human_size(size: int) -> str:
    if size >= MIB:
        value, unit = size / MIB, "MB"
    elif size >= 1024:
        value, unit = size / 1024, "KB"
    else:
        return f"{size} bytes"
    return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
