"""Writers of small test PDFs in hand-written PDF syntax (plus pypdf for encryption), without network or reportlab."""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from pathlib import Path

from pypdf import PdfReader, PdfWriter

Page = Sequence[str]
"""The lines of one page; an empty string leaves a blank line (a paragraph break)."""

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
_GRAY_PIXELS = 8
"""Width and height of the grey square a scanned-like page shows instead of text."""


def _escape(text: str) -> bytes:
    """A PDF literal string body; WinAnsi (cp1252) covers the Latin text the tests use."""
    raw = text.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _stream(content: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(content), extra, content)


def _text_content(lines: Page) -> bytes:
    """BT/Tf/Td/Tj with one T* per line, so each line sits 14 points below the previous one."""
    ops = [b"BT", b"/F1 12 Tf", b"14 TL", b"72 760 Td"]
    for line in lines:
        ops.append(b"(%s) Tj T*" % _escape(line))
    ops.append(b"ET")
    return b"\n".join(ops)


def _image_content() -> bytes:
    """Draw the image XObject /Im1 over most of the page, like a scanned page without a text layer."""
    return b"q 468 0 0 648 72 72 cm /Im1 Do Q"


def build_pdf(objects: Sequence[bytes]) -> bytes:
    """Serialize objects 1..n (object 1 must be the catalog) with a correct xref table and trailer."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref_at = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref_at))
    return out.getvalue()


def _page_objects(pages: Sequence[Page | None], first: int) -> tuple[list[int], list[bytes]]:
    """Page, content (and for image pages, image) objects numbered from `first`; None is an image-only page."""
    refs: list[int] = []
    objects: list[bytes] = []
    for lines in pages:
        page_number = first + len(objects)
        refs.append(page_number)
        if lines is None:
            resources = b"<< /XObject << /Im1 %d 0 R >> >>" % (page_number + 2)
            content = _image_content()
        else:
            resources = b"<< /Font << /F1 3 0 R >> >>"
            content = _text_content(lines)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>"
            % (resources, page_number + 1)
        )
        objects.append(_stream(content))
        if lines is None:
            pixels = bytes((i * 37) % 256 for i in range(_GRAY_PIXELS * _GRAY_PIXELS))
            image_dict = b" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray" % (
                _GRAY_PIXELS,
                _GRAY_PIXELS,
            )
            objects.append(_stream(pixels, image_dict + b" /BitsPerComponent 8"))
    return refs, objects


def pdf_bytes(pages: Sequence[Page | None]) -> bytes:
    """A PDF with one page per entry: lines of Helvetica text, an empty list (blank page) or None (image only)."""
    refs, page_objects = _page_objects(pages, first=4)
    kids = b" ".join(b"%d 0 R" % ref for ref in refs)
    catalog = b"<< /Type /Catalog /Pages 2 0 R >>"
    tree = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(refs))
    return build_pdf([catalog, tree, _FONT, *page_objects])


def write_pdf(path: Path, pages: Sequence[Page | None]) -> Path:
    """Write pdf_bytes(pages) to path and return it."""
    path.write_bytes(pdf_bytes(pages))
    return path


def write_zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty (/Kids [] /Count 0)."""
    path.write_bytes(pdf_bytes([]))
    return path


def write_scanned_pdf(path: Path, pages: int = 2) -> Path:
    """Pages that show only an image, as a scanner without OCR produces."""
    return write_pdf(path, [None] * pages)


def _encrypted(pages: Sequence[Page | None], *, user_password: str, owner_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def write_encrypted_pdf(path: Path, pages: Sequence[Page | None], password: str = "s3cret") -> Path:
    """A PDF that cannot be opened without the user password."""
    path.write_bytes(_encrypted(pages, user_password=password, owner_password="owner-" + password))
    return path


def write_owner_only_pdf(path: Path, pages: Sequence[Page | None]) -> Path:
    """Encrypted with an owner password only: any reader opens it with the empty user password."""
    path.write_bytes(_encrypted(pages, user_password="", owner_password="owner-only"))
    return path


def write_truncated_pdf(path: Path, pages: Sequence[Page | None], keep: float = 0.5) -> Path:
    """The first `keep` fraction of a valid PDF: the header is there, the xref and trailer are not."""
    data = pdf_bytes(pages)
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def write_garbage_pdf(path: Path, size: int = 4096) -> Path:
    """Deterministic binary noise with a .pdf name and no %PDF header."""
    path.write_bytes(bytes((i * 7919 + 13) % 256 for i in range(size)))
    return path


def write_text_as_pdf(path: Path) -> Path:
    """A plain text file renamed to .pdf."""
    path.write_text("These are meeting notes saved as text.\nThey were renamed to notes.pdf by mistake.\n")
    return path


def write_headed_garbage_pdf(path: Path) -> Path:
    """A %PDF header followed by nonsense: passes a header sniff but has no xref, trailer or objects."""
    path.write_bytes(b"%PDF-1.7\n" + bytes((i * 31 + 7) % 256 for i in range(2048)) + b"\n%%EOF\n")
    return path


def _one_page_pdf(content_object: bytes) -> bytes:
    """Catalog, page tree, font and one text page whose content stream is `content_object` (dict and data)."""
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
    catalog = b"<< /Type /Catalog /Pages 2 0 R >>"
    tree = b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>"
    return build_pdf([catalog, tree, _FONT, page + b" /Contents 5 0 R >>", content_object])


def write_zip_bomb_pdf(path: Path, inflated_mb: int = 80) -> Path:
    """One FlateDecode content stream of ~100 KB that inflates to `inflated_mb` MB of spaces."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"BT /F1 12 Tf 72 700 Td (boom) Tj ET\n")]
    block = b" " * (1024 * 1024)
    parts.extend(packer.compress(block) for _ in range(inflated_mb))
    parts.append(packer.flush())
    path.write_bytes(_one_page_pdf(_stream(b"".join(parts), b" /Filter /FlateDecode")))
    return path


def write_deeply_nested_pdf(path: Path, depth: int = 5000) -> Path:
    """A content stream with `depth` nested arrays, which drives a recursive parser past Python's stack limit."""
    content = b"BT /F1 12 Tf 72 700 Td " + b"[" * depth + b"]" * depth + b" (deep) Tj ET"
    path.write_bytes(_one_page_pdf(_stream(content)))
    return path


def text_bomb_pdf_bytes(chars: int = 8_000_000, pages: int = 20) -> bytes:
    """Pages of one repeated sentence in FlateDecode content streams: a file of tens of KB holding `chars` of text.

    Unlike write_zip_bomb_pdf (spaces, refused by pypdf's stream limits) every stream here is small enough for
    pypdf to decode, so only the ingestion's own bounds stop the text from reaching the chunker and embedder.
    """
    sentence = "Workers acknowledge each message only after the task has finished, so nothing is lost. "
    per_page = max(1, chars // pages // len(sentence))
    line = b"(%s) Tj T*\n" % _escape(sentence)
    objects: list[bytes] = []
    refs: list[int] = []
    for index in range(pages):
        refs.append(4 + 2 * index)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
                       b" /Contents %d 0 R >>" % (5 + 2 * index))
        content = b"BT /F1 12 Tf 14 TL 72 760 Td\n" + line * per_page + b"ET"
        objects.append(_stream(zlib.compress(content, 9), b" /Filter /FlateDecode"))
    kids = b" ".join(b"%d 0 R" % ref for ref in refs)
    tree = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)
    return build_pdf([b"<< /Type /Catalog /Pages 2 0 R >>", tree, _FONT, *objects])


def write_text_bomb_pdf(path: Path, chars: int = 8_000_000, pages: int = 20) -> Path:
    """Write text_bomb_pdf_bytes(chars, pages) to path and return it."""
    path.write_bytes(text_bomb_pdf_bytes(chars, pages))
    return path
