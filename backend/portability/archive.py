"""The archive: one zip holding a manifest, JSON-lines members (rows, vectors) and media files, all streamed.

A zip member can be written without knowing its size in advance (zip64), so a member streams from the
database or the vector store to the file one row at a time and is read back the same way: memory holds
one batch, never the install.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import sys
import uuid
import zipfile
from array import array
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from backend.pipeline.types import Chunk, SourceKind

FORMAT = "openguru-archive"
VERSION = 1
MANIFEST = "manifest.json"
KIND_FULL = "full"
KIND_VECTORS = "vectors"


class ArchiveError(Exception):
    """The archive cannot be read or does not fit this install; the message says what to do."""


def _default(value: object) -> object:
    # Full precision: Django's JSON encoder cuts datetimes to milliseconds, and the answer cache keys on them.
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    raise TypeError(f"cannot archive a {type(value).__name__}")


def dumps(value: object) -> str:
    """One JSON line."""
    return json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":"))


def encode_vector(vector: Iterable[float]) -> str:
    """float32 little-endian, base64: exact for what Milvus stores (float32) and a third the size of JSON floats."""
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode()


def decode_vector(text: str) -> tuple[float, ...]:
    packed = array("f")
    packed.frombytes(base64.b64decode(text))
    if sys.byteorder != "little":
        packed.byteswap()
    return tuple(packed)


def chunk_row(chunk: Chunk) -> dict[str, Any]:
    return {"id": chunk.id, "text": chunk.text, "vector": encode_vector(chunk.vector), "source_id": chunk.source_id,
            "generation": chunk.generation, "kind": chunk.kind.value, "metadata": chunk.metadata}


def row_chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(id=str(row["id"]), text=str(row["text"]), vector=decode_vector(row["vector"]),
                 source_id=int(row["source_id"]), generation=int(row["generation"]), kind=SourceKind(row["kind"]),
                 metadata=dict(row.get("metadata") or {}))


class ArchiveWriter:
    """Writes members one at a time; the manifest goes last, once every count is known."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)

    @contextmanager
    def lines(self, name: str) -> Iterator[IO[str]]:
        """A text stream for a JSON-lines member."""
        with self._zip.open(name, "w", force_zip64=True) as raw, io.TextIOWrapper(raw, encoding="utf-8") as text:
            yield text

    def copy(self, name: str, source: IO[bytes]) -> int:
        """Stream a file into the archive; its size in bytes."""
        size = 0
        with self._zip.open(name, "w", force_zip64=True) as target:
            while block := source.read(1 << 20):
                target.write(block)
                size += len(block)
        return size

    def close(self, manifest: dict[str, Any]) -> None:
        self._zip.writestr(MANIFEST, json.dumps({"format": FORMAT, "version": VERSION, **manifest}, indent=2,
                                                default=_default))
        self._zip.close()

    def abort(self) -> None:
        self._zip.close()
        self.path.unlink(missing_ok=True)


class ArchiveReader:
    """Reads the manifest first and refuses an archive of another format or version."""

    def __init__(self, path: Path) -> None:
        try:
            self._zip = zipfile.ZipFile(path)
            manifest = json.loads(self._zip.read(MANIFEST))
        except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
            raise ArchiveError(f"{path} is not an OpenGuru archive (no readable {MANIFEST}: {exc}).") from exc
        if manifest.get("format") != FORMAT:
            raise ArchiveError(f"{path} is not an OpenGuru archive (format {manifest.get('format')!r}).")
        version = manifest.get("version")
        if version != VERSION:
            raise ArchiveError(
                f"{path} is archive format version {version}; this OpenGuru reads version {VERSION}. "
                + ("Upgrade OpenGuru to import it." if isinstance(version, int) and version > VERSION else
                   "Import it with the OpenGuru release that wrote it, then export again.")
            )
        self.manifest: dict[str, Any] = manifest
        self.names = set(self._zip.namelist())

    def rows(self, name: str) -> Iterator[dict[str, Any]]:
        """The objects of a JSON-lines member, one at a time."""
        if name not in self.names:
            raise ArchiveError(f"The archive lacks {name}; it is incomplete (was the export interrupted?).")
        with self._zip.open(name) as raw, io.TextIOWrapper(raw, encoding="utf-8") as text:
            for line in text:
                if line.strip():
                    yield json.loads(line)

    @contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        if name not in self.names:
            raise ArchiveError(f"The archive lacks {name}; it is incomplete (was the export interrupted?).")
        with self._zip.open(name) as member:
            yield member

    def close(self) -> None:
        self._zip.close()
