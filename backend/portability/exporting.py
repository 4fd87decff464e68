"""export_data: the install's rows, uploaded files, sealed secrets and vectors, streamed into one archive."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core import serializers
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from backend.core.fields import EncryptedTextField
from backend.portability.archive import KIND_FULL, KIND_VECTORS, ArchiveWriter, dumps
from backend.portability.catalog import EXPORTED, MEDIA_FIELDS, NATURAL
from backend.portability.secretbox import SecretBox, key_file_for
from backend.portability.vectors import export_vectors

BATCH = 500


@dataclass
class ExportReport:
    """What went into the archive, for the command to print and the manifest to record."""

    path: Path
    kind: str
    rows: dict[str, int] = field(default_factory=dict)
    media_files: int = 0
    media_bytes: int = 0
    media_missing: list[str] = field(default_factory=list)
    secrets: int = 0
    secrets_omitted: int = 0
    key_file: Path | None = None
    collections: list[dict[str, Any]] = field(default_factory=list)


def applied_migrations() -> list[str]:
    """The schema the rows were read from, as "app.migration" names."""
    return sorted(f"{app}.{name}" for app, name in MigrationRecorder(connection).applied_migrations())


def export_install(path: Path, *, vectors_only: bool = False, with_secrets: bool = True) -> ExportReport:
    """Write the archive to `path` (a half-written file is removed on failure) and, if it holds secrets, its key.

    Rows are read in one read-only snapshot, so a question asked meanwhile cannot leave a citation without
    its question; vectors are read afterwards (Milvus has no snapshot), and import checks every source's
    live chunks against its row and re-indexes one that differs.
    """
    report = ExportReport(path=path, kind=KIND_VECTORS if vectors_only else KIND_FULL)
    box = SecretBox.new() if with_secrets else None
    writer = ArchiveWriter(path)
    try:
        manifest: dict[str, Any] = {"kind": report.kind, "created_at": timezone.now(), "schema": applied_migrations()}
        if not vectors_only:
            with read_snapshot():
                for label in EXPORTED:
                    report.rows[label] = _export_model(writer, label, box, report)
                _export_media(writer, report)
        report.collections = export_vectors(writer)
        manifest.update(rows=report.rows, collections=report.collections,
                        media={"files": report.media_files, "bytes": report.media_bytes},
                        secrets={"sealed": report.secrets, "omitted": report.secrets_omitted,
                                 "check": box.check_token() if box and report.secrets else ""})
        writer.close(manifest)
    except BaseException:
        writer.abort()
        raise
    if box and report.secrets:
        report.key_file = key_file_for(path)
        box.write(report.key_file)
    return report


@contextmanager
def read_snapshot() -> Iterator[None]:
    """Every read inside sees the database as it was at the first one, without blocking writers."""
    if connection.in_atomic_block:  # already inside a transaction (tests): it is the snapshot
        yield
    elif connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield
    else:
        # Django opens SQLite transactions with BEGIN IMMEDIATE (the write lock) in this project; a deferred
        # read transaction in WAL mode is a snapshot that lets the worker keep writing.
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("ROLLBACK")


def _batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def _export_model(writer: ArchiveWriter, label: str, box: SecretBox | None, report: ExportReport) -> int:
    model = apps.get_model(label)
    secret_fields = [f.name for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)]
    serializer = serializers.get_serializer("python")()
    count = 0
    with writer.lines(f"db/{label}.jsonl") as out:
        # One batch at a time: the serializer keeps every object it was given until it returns.
        for batch in _batches(model._default_manager.order_by("pk").iterator(chunk_size=BATCH), BATCH):
            for row in serializer.serialize(batch, use_natural_foreign_keys=True,
                                            use_natural_primary_keys=label in NATURAL):
                _seal(row["fields"], secret_fields, box, report)
                out.write(dumps(row) + "\n")
                count += 1
    return count


def _seal(fields: dict[str, Any], names: list[str], box: SecretBox | None, report: ExportReport) -> None:
    for name in names:
        if fields.get(name):
            if box is None:
                fields[name] = ""
                report.secrets_omitted += 1
            else:
                fields[name] = box.seal(fields[name])
                report.secrets += 1


def _export_media(writer: ArchiveWriter, report: ExportReport) -> None:
    for label, name in MEDIA_FIELDS.items():
        model = apps.get_model(label)
        files = model._default_manager.exclude(**{name: ""}).order_by("pk").values_list(name, flat=True)
        for file_name in files.iterator(chunk_size=BATCH):
            try:
                with default_storage.open(file_name, "rb") as source:
                    report.media_bytes += writer.copy(f"media/{file_name}", source)
            except FileNotFoundError:
                report.media_missing.append(file_name)  # deleted meanwhile, or lost before the export
                continue
            report.media_files += 1
