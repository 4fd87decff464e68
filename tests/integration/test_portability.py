"""export_data / import_data: an install comes back whole in another one, and bad imports are refused early."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.core.fields import decrypt_text
from backend.gurus.models import Guru, VectorCollection
from backend.integrations.models import Integration
from backend.portability.catalog import EXPORTED, LEFT_OUT
from backend.retrieval.services import retrieve
from backend.sources.models import DataSource, SourceStatus
from tests.factories import GuruFactory
from tests.integration.portability_support import (
    FIRST,
    SECOND,
    TOKEN,
    ask,
    build_install,
    differences,
    media,
    rows,
    vectors,
    wipe,
)

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture
def install(milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return build_install(django_capture_on_commit_callbacks)


def export(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("export_data", str(path), *args, stdout=out)
    return out.getvalue()


def import_(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("import_data", str(path), *args, stdout=out, stderr=out)
    return out.getvalue()


def found(guru: Guru, question: str) -> list[tuple[str, int, float]]:
    contexts = retrieve(guru=guru, query=question, rerank_threshold=0.0).contexts
    return [(c.title, c.source_id, round(c.score, 6)) for c in contexts]


def become_another_install(settings: SettingsWrapper) -> None:
    """Empty, with its own encryption key and collection prefix (names stay under the fixture's, which drops them)."""
    wipe()
    settings.OPENGURU_ENCRYPTION_KEY = "the-target-installs-own-key"
    settings.OPENGURU_COLLECTION_PREFIX = f"{settings.OPENGURU_COLLECTION_PREFIX}b_"


def test_an_install_comes_back_whole_in_another_install(install: Guru, settings: SettingsWrapper,
                                                        tmp_path: Path) -> None:
    retrieved = found(install, SECOND)
    before = rows(), vectors(), media()
    assert retrieved and before[1]["docs"]
    archive = tmp_path / "install.zip"
    printed = export(archive)
    assert "answering.question" in printed and "3 secret(s) are sealed with the key in" in printed
    key_file = tmp_path / "install.zip.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    with zipfile.ZipFile(archive) as packed:
        integrations = packed.read("db/integrations.integration.jsonl").decode()
        manifest = json.loads(packed.read("manifest.json"))
    assert TOKEN not in integrations and "archive-fernet:" in integrations
    assert manifest["rows"]["answering.question"] == 1 and manifest["secrets"]["sealed"] == 3

    become_another_install(settings)
    printed = import_(archive)

    assert "Import complete" in printed and "imported into" in printed
    # Ids, timestamps to the microsecond, files, vectors; a difference is named by table, row and field.
    assert differences(before, (rows(), vectors(), media())) == []
    guru = Guru.objects.get(slug="docs")
    record = VectorCollection.objects.get(guru_id=guru.pk)
    assert record.name == f"{settings.OPENGURU_COLLECTION_PREFIX}docs" and record.embedder == registry.embedder_id()
    assert found(guru, SECOND) == retrieved
    assert ask(guru, FIRST) and ask(guru, SECOND)
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token FROM integrations_integration")
        stored = cursor.fetchone()[0]
    assert stored.startswith("fernet:") and decrypt_text(stored) == TOKEN  # re-encrypted with this install's key
    assert Integration.objects.get().access_token == TOKEN
    assert Client().login(username="keeper", password="correct horse battery staple")
    assert GuruFactory(slug="after-import").pk > guru.pk  # the id sequences moved past the imported ids


def test_every_model_is_exported_or_left_out_on_purpose() -> None:
    labels = {model._meta.label_lower for model in apps.get_models()}
    assert labels == set(EXPORTED) | set(LEFT_OUT)
    assert not set(EXPORTED) & set(LEFT_OUT)


def test_an_archive_from_an_older_schema_is_imported(install: Guru, settings: SettingsWrapper,
                                                     tmp_path: Path) -> None:
    archive = tmp_path / "install.zip"
    export(archive)
    become_another_install(settings)
    older = _rewritten(archive, tmp_path / "older.zip", without_migration="answering.0004_question_state")
    (tmp_path / "older.zip.key").write_bytes((tmp_path / "install.zip.key").read_bytes())
    assert "the archive's schema is older" in import_(older)
    assert Guru.objects.get().slug == "docs"


def test_a_non_empty_install_is_refused_unless_replaced(install: Guru, settings: SettingsWrapper,
                                                        tmp_path: Path, milvus: MilvusVectorStore) -> None:
    archive = tmp_path / "install.zip"
    export(archive)
    settings.OPENGURU_COLLECTION_PREFIX = f"{settings.OPENGURU_COLLECTION_PREFIX}b_"
    with pytest.raises(CommandError, match=r"not empty \(1 guru, 2 datasource.*--replace"):
        import_(archive)
    old = VectorCollection.objects.get(guru_id=install.pk).name
    Guru.objects.filter(pk=install.pk).update(slug="renamed")  # so the replaced guru's collection is a new name

    printed = import_(archive, "--replace")

    assert "Replaced: 1 gurus.guru" in printed
    assert list(Guru.objects.values_list("slug", flat=True)) == ["docs"]
    assert old not in milvus.list_collections()
    assert DataSource.objects.get(kind="PDF").status == SourceStatus.INDEXED


def test_refusals_come_before_anything_is_written(install: Guru, settings: SettingsWrapper, tmp_path: Path) -> None:
    archive = tmp_path / "install.zip"
    export(archive)
    become_another_install(settings)
    with pytest.raises(CommandError, match="No archive at"):
        import_(tmp_path / "missing.zip")
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(CommandError, match="is not an OpenGuru archive"):
        import_(tmp_path / "junk.zip")
    with pytest.raises(CommandError, match="format version 2; this OpenGuru reads version 1. Upgrade OpenGuru"):
        import_(_rewritten(archive, tmp_path / "v2.zip", version=2))
    with pytest.raises(CommandError, match="comes from a newer OpenGuru.*gurus.9999_future"):
        import_(_rewritten(archive, tmp_path / "newer.zip", extra_migration="gurus.9999_future"))
    (tmp_path / "install.zip.key").rename(tmp_path / "elsewhere.key")
    with pytest.raises(CommandError, match="3 sealed secret.*--key-file PATH, or --without-secrets"):
        import_(archive)
    with pytest.raises(CommandError, match="belongs to another archive"):
        import_(archive, "--key-file", str(_other_key(tmp_path)))
    assert not Guru.objects.exists() and not DataSource.objects.exists()

    printed = import_(archive, "--key-file", str(tmp_path / "elsewhere.key"))
    assert "secrets re-encrypted with this install's key: 3" in printed


def test_an_interrupted_archive_writes_nothing(install: Guru, settings: SettingsWrapper, tmp_path: Path) -> None:
    archive = tmp_path / "install.zip"
    export(archive)
    become_another_install(settings)
    cut = _rewritten(archive, tmp_path / "cut.zip", drop="db/answering.citation.jsonl")
    (tmp_path / "cut.zip.key").write_bytes((tmp_path / "install.zip.key").read_bytes())
    with pytest.raises(CommandError, match="lacks db/answering.citation.jsonl"):
        import_(cut)
    assert not Guru.objects.exists() and media() == {}


def test_without_secrets_the_tokens_stay_behind(install: Guru, settings: SettingsWrapper, tmp_path: Path) -> None:
    archive = tmp_path / "install.zip"
    assert "3 secret(s) left out" in export(archive, "--without-secrets")
    assert not (tmp_path / "install.zip.key").exists()
    become_another_install(settings)
    import_(archive)
    assert Integration.objects.get().access_token == ""
    assert DataSource.objects.get(kind="GITHUB_REPO").access_token == ""


def test_another_embedder_re_indexes_instead_of_mixing_vector_spaces(
    install: Guru, settings: SettingsWrapper, tmp_path: Path,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    archive = tmp_path / "install.zip"
    export(archive)
    become_another_install(settings)
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "256"}
    with django_capture_on_commit_callbacks(execute=True):
        printed = import_(archive)
    assert "re-indexing into" in printed and "the archive's embedder differs; 2 source(s) queued" in printed
    guru = Guru.objects.get(slug="docs")
    record = VectorCollection.objects.get(guru_id=guru.pk)
    assert (record.dimension, record.embedder) == (256, "hashing:256")
    pdf = DataSource.objects.get(kind="PDF")
    assert pdf.status == SourceStatus.INDEXED and pdf.chunk_count > 0  # re-indexed from the imported file
    assert ask(guru, SECOND)


def test_vectors_only_restore_and_a_source_indexed_in_between(
    install: Guru, tmp_path: Path, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    before = vectors()
    archive = tmp_path / "vectors.zip"
    printed = export(archive, "--vectors-only")
    assert "vectors of docs" in printed and not (tmp_path / "vectors.zip.key").exists()
    record = VectorCollection.objects.get(guru_id=install.pk)
    milvus.drop_collection(record.name)  # Milvus lost; the database (pg_restore) is intact
    pdf = DataSource.objects.get(kind="PDF")
    DataSource.objects.filter(pk=pdf.pk).update(chunk_count=pdf.chunk_count + 1)  # as if re-indexed meanwhile

    with django_capture_on_commit_callbacks(execute=True):
        printed = import_(archive)

    assert f"source(s) {pdf.pk} queued for re-indexing" in printed
    assert vectors().keys() == before.keys()
    pdf.refresh_from_db()
    assert pdf.status == SourceStatus.INDEXED and pdf.indexed_generation == 2
    with pytest.raises(CommandError, match="already holds .* chunks.*--replace"):
        import_(archive)
    assert "imported into" in import_(archive, "--replace")


def _rewritten(source: Path, target: Path, *, version: int = 1, extra_migration: str = "", drop: str = "",
               without_migration: str = "") -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            if item.filename == drop:
                continue
            data = old.read(item.filename)
            if item.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["version"] = version
                manifest["schema"] += [extra_migration] if extra_migration else []
                manifest["schema"] = [m for m in manifest["schema"] if m != without_migration]
                data = json.dumps(manifest).encode()
            new.writestr(item, data)
    return target


def _other_key(tmp_path: Path) -> Path:
    from backend.portability.secretbox import SecretBox

    path = tmp_path / "other.key"
    SecretBox.new().write(path)
    return path
