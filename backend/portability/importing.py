"""import_data: restore an archive into an empty install (or, with --replace, instead of what it holds).

Rows keep their ids, so references inside the archive (citations, links to uploaded files, chunk
metadata in the vectors) stay true; accounts are matched by username. Everything is written in one
transaction and every model's count is checked against the manifest before it commits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core import serializers
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.db import IntegrityError, connection, transaction

from backend.core.fields import EncryptedTextField
from backend.portability.archive import KIND_VECTORS, ArchiveError, ArchiveReader
from backend.portability.catalog import EXPORTED, MEDIA_FIELDS, NATURAL
from backend.portability.replace import (
    check_no_pending_drops,
    check_schema,
    content_counts,
    migrate_new_database,
    refuse_non_empty,
    remove_clones,
    wipe_content,
)
from backend.portability.secretbox import SEALED_PREFIX, SecretBox, key_file_for
from backend.portability.vectors import VectorResult, check_targets, import_vectors


@dataclass(frozen=True)
class ImportOptions:
    key_file: Path | None = None
    without_secrets: bool = False
    replace: bool = False
    vectors_only: bool = False


@dataclass
class ImportReport:
    """What was written, beside what the archive says it holds."""

    kind: str
    expected: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    users_kept: list[str] = field(default_factory=list)
    media_files: int = 0
    media_missing: list[str] = field(default_factory=list)
    secrets: int = 0
    secrets_dropped: int = 0
    older_schema: bool = False
    migrated: bool = False
    """The database was new and was migrated before the import."""
    replaced: dict[str, int] = field(default_factory=dict)
    vectors: list[VectorResult] = field(default_factory=list)


def import_install(path: Path, options: ImportOptions) -> ImportReport:
    """Check everything that can be checked before writing, then write rows and files, then vectors."""
    reader = ArchiveReader(path)
    try:
        manifest = reader.manifest
        vectors_only = options.vectors_only or manifest["kind"] == KIND_VECTORS
        report = ImportReport(kind=KIND_VECTORS if vectors_only else manifest["kind"],
                              expected=dict(manifest.get("rows", {})))
        report.migrated = migrate_new_database()
        report.older_schema = check_schema(manifest.get("schema", []))
        box, existing = None, {}
        if not vectors_only:
            box = _secret_box(reader, path, options)
            check_no_pending_drops()
            existing = content_counts()
            if any(existing.values()) and not options.replace:
                refuse_non_empty(existing)
        check_targets(reader, replace=options.replace)
        if not vectors_only:
            if any(existing.values()):
                report.replaced = wipe_content()
            _import_rows(reader, box, report)
        report.vectors = import_vectors(reader, replace=options.replace)
        return report
    finally:
        reader.close()


def _secret_box(reader: ArchiveReader, path: Path, options: ImportOptions) -> SecretBox | None:
    secrets = reader.manifest.get("secrets", {})
    if not secrets.get("sealed") or options.without_secrets:
        return None
    key_path = options.key_file or key_file_for(path)
    if not key_path.exists():
        raise ArchiveError(
            f"The archive holds {secrets['sealed']} sealed secret(s) (integration and repository tokens) and their "
            f"key is not at {key_path}. Pass --key-file PATH, or --without-secrets to import without them "
            "(then re-enter those tokens)."
        )
    box = SecretBox.from_file(key_path)
    box.verify(secrets["check"])
    return box


def _import_rows(reader: ArchiveReader, box: SecretBox | None, report: ImportReport) -> None:
    written: list[str] = []
    try:
        with transaction.atomic():
            for label in EXPORTED:
                report.rows[label] = _import_model(reader, label, box, report)
            _reset_sequences()
            try:
                connection.check_constraints()
            except IntegrityError as exc:
                raise ArchiveError(f"The archive's rows do not fit together ({exc}); was it edited?") from exc
            _verify_counts(report)
            _import_media(reader, report, written)
    except BaseException:
        for name in written:  # files are not transactional: take back what this failed import wrote
            default_storage.delete(name)
        raise
    remove_clones(list(apps.get_model("sources.datasource")._default_manager.values_list("pk", flat=True)))


def _import_model(reader: ArchiveReader, label: str, box: SecretBox | None, report: ImportReport) -> int:
    model = apps.get_model(label)
    secret_fields = [f.name for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)]

    def rows() -> Iterator[dict[str, Any]]:
        for row in reader.rows(f"db/{label}.jsonl"):
            _unseal(row["fields"], secret_fields, box, report)
            yield row

    count = 0
    # An older archive may name a field removed since: it is dropped; fields added since take their defaults.
    for obj in serializers.deserialize("python", rows(), ignorenonexistent=report.older_schema):
        count += 1
        if label in NATURAL and obj.object.pk is not None:
            # The account (or group) exists here: it stays as it is, and the archive's rows now point to it.
            report.users_kept.append(str(obj.object))
            continue
        obj.save()
    return count


def _unseal(fields: dict[str, Any], names: list[str], box: SecretBox | None, report: ImportReport) -> None:
    for name in names:
        value = fields.get(name) or ""
        if not value.startswith(SEALED_PREFIX):
            continue
        if box is None:
            fields[name] = ""
            report.secrets_dropped += 1
        else:
            fields[name] = box.open(value)  # plain here; the field encrypts it with this install's key
            report.secrets += 1


def _reset_sequences() -> None:
    # Explicit ids leave PostgreSQL's sequences behind; the next guru would otherwise collide with an imported one.
    statements = connection.ops.sequence_reset_sql(no_style(), [apps.get_model(label) for label in EXPORTED])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _verify_counts(report: ImportReport) -> None:
    """Nothing lost: every model's rows as the manifest counted them, read and now in the database."""
    problems = []
    for label in EXPORTED:
        expected, read = report.expected.get(label, 0), report.rows.get(label, 0)
        stored = apps.get_model(label)._default_manager.count()
        if read != expected or (label not in NATURAL and stored != expected):
            problems.append(f"{label}: archive {expected}, read {read}, stored {stored}")
    if problems:
        raise ArchiveError("The import does not match the archive, so nothing was written: " + "; ".join(problems))


def _import_media(reader: ArchiveReader, report: ImportReport, written: list[str]) -> None:
    for label, name in MEDIA_FIELDS.items():
        model = apps.get_model(label)
        for pk, file_name in model._default_manager.exclude(**{name: ""}).values_list("pk", name).iterator():
            member = f"media/{file_name}"
            if member not in reader.names:
                report.media_missing.append(file_name)  # it was already missing when the export ran
                continue
            if default_storage.exists(file_name):
                default_storage.delete(file_name)  # left by a deleted guru of this install; ours replaces it
            with reader.open(member) as content:
                saved = default_storage.save(file_name, File(content, name=file_name))
            written.append(saved)
            if saved != file_name:
                model._default_manager.filter(pk=pk).update(**{name: saved})
            report.media_files += 1
