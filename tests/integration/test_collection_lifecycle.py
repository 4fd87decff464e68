"""Guru create / rename / delete drive its Milvus collection (real Milvus Lite or server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus import services
from backend.gurus.checks import check_collection_dimensions
from backend.gurus.models import CollectionStatus, Guru, VectorCollection
from backend.pipeline.errors import DimensionMismatchError, PermanentServiceError, TransientServiceError
from backend.pipeline.types import Chunk, SourceKind
from backend.sources.models import DataSource
from tests.factories import DataSourceFactory, GuruFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def _create(capture: DjangoCaptureOnCommitCallbacks, **fields: object) -> Guru:
    with capture(execute=True):
        return GuruFactory(**fields)


def _record(guru: Guru) -> VectorCollection:
    return VectorCollection.objects.get(guru_id=guru.pk)


def _chunk(text: str) -> Chunk:
    vector = tuple(registry.embedder().embed_documents([text])[0])
    return Chunk(id="c1", text=text, vector=vector, source_id=1, generation=1, kind=SourceKind.PDF)


def test_creating_a_guru_creates_its_collection(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="celery-docs")
    expected = services.collection_name_for("celery-docs")
    assert expected.endswith("celery_docs")
    record = _record(guru)
    assert (record.name, record.status, record.dimension) == (expected, CollectionStatus.READY, 384)
    info = milvus.collection_info(expected)
    assert info is not None and info.dimension == registry.embedder().dimension and info.loaded


def test_collection_is_created_only_after_commit(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        GuruFactory(slug="not-yet")
    assert milvus.collection_info(services.collection_name_for("not-yet")) is None
    assert len(callbacks) == 1


def test_changing_the_slug_renames_the_collection_and_keeps_its_data(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="old-name")
    milvus.upsert(_record(guru).name, [_chunk("chunks survive a rename")])
    guru.slug = "new-name"
    with django_capture_on_commit_callbacks(execute=True):
        guru.save()
    new_name = services.collection_name_for("new-name")
    assert _record(guru).name == new_name
    assert milvus.collection_info(services.collection_name_for("old-name")) is None
    hits = milvus.search_dense(new_name, registry.embedder().embed_query("chunks survive"), top_k=1)
    assert hits[0].text == "chunks survive a rename"


def test_saving_without_changes_schedules_nothing(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="steady")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        guru.name = "Steady Guru"
        guru.save()
    assert callbacks == []


def test_deleting_a_guru_drops_its_collection_sources_and_files(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="short-lived")
    DataSourceFactory(guru=guru)
    upload = Path(settings.MEDIA_ROOT) / "sources" / str(guru.pk) / "manual.pdf"
    upload.parent.mkdir(parents=True)
    upload.write_bytes(b"%PDF-1.4")
    name = _record(guru).name
    with django_capture_on_commit_callbacks(execute=True):
        guru.delete()
    assert milvus.collection_info(name) is None
    assert not VectorCollection.objects.exists()
    assert not upload.parent.exists()
    assert DataSource.objects.count() == 0


def test_sync_is_idempotent_and_repairs_a_missing_collection(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="repair-me")
    milvus.drop_collection(_record(guru).name)
    services.guru_collection_sync(guru_id=guru.pk)
    services.guru_collection_sync(guru_id=guru.pk)
    assert milvus.collection_info(_record(guru).name) is not None
    services.guru_collection_sync(guru_id=guru.pk + 1000)  # a deleted guru is a no-op


def test_dimension_mismatch_is_detected_not_corrupted(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="dims")
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "128"}
    errors = check_collection_dimensions()
    assert [e.id for e in errors] == ["openguru.E001"]
    assert "384-d" in errors[0].msg and "128-d" in errors[0].msg
    with pytest.raises(DimensionMismatchError):
        services.guru_collection_sync(guru_id=guru.pk)
    record = _record(guru)
    assert record.status == CollectionStatus.ERROR
    assert "Re-embed" in record.error
    info = milvus.collection_info(record.name)
    assert info is not None and info.dimension == 384


def test_collections_command_shows_stats(
    milvus: MilvusVectorStore,
    capsys: pytest.CaptureFixture[str],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="listed")
    milvus.upsert(_record(guru).name, [_chunk("one row")])
    call_command("collections")
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("listed"))
    assert line.split()[1:] == [_record(guru).name, "384", "1", "ok"]


def test_a_stale_guru_save_cannot_lose_track_of_the_collection(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="first")
    stale = Guru.objects.get(pk=guru.pk)
    guru.slug = "second"
    with django_capture_on_commit_callbacks(execute=True):
        guru.save()
    stale.slug = "third"
    with django_capture_on_commit_callbacks(execute=True):
        stale.save()
    names = [n for n in milvus.list_collections() if n.startswith(services.collection_name_for(""))]
    assert names == [services.collection_name_for("third")]


def test_a_new_guru_waits_for_a_deleted_namesakes_collection_to_be_dropped(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    old = _create(django_capture_on_commit_callbacks, slug="reused")
    old_id = old.pk
    with django_capture_on_commit_callbacks(execute=False):
        old.delete()  # its drop has not run yet
    with django_capture_on_commit_callbacks(execute=False):
        new = GuruFactory(slug="reused")
    with pytest.raises(TransientServiceError):
        services.guru_collection_sync(guru_id=new.pk)
    services.guru_collection_drop(guru_id=old_id, collection_names=[])
    services.guru_collection_sync(guru_id=new.pk)
    assert _record(new).status == CollectionStatus.READY


def test_reembed_rebuilds_the_collection_for_a_new_embedder_and_requeues_sources(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    capsys: pytest.CaptureFixture[str],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="switching")
    DataSourceFactory(guru=guru, status="INDEXED", chunk_count=5)
    milvus.upsert(_record(guru).name, [_chunk("old space")])
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "128"}
    call_command("reembed", "--all", "--yes")
    assert "switching: collection rebuilt; 1 source(s) marked PENDING" in capsys.readouterr().out
    record = _record(guru)
    info = milvus.collection_info(record.name)
    assert info is not None and (info.dimension, info.row_count) == (128, 0)
    assert (record.dimension, record.embedder, record.status) == (128, "hashing:128", CollectionStatus.READY)
    source = DataSource.objects.get()
    assert (source.status, source.chunk_count) == ("PENDING", 0)
    assert check_collection_dimensions() == []


def test_same_dimension_but_another_embedder_is_detected(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    guru = _create(django_capture_on_commit_callbacks, slug="same-dim")
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "MODEL": "other-model", "DIMENSION": "384"}
    assert [e.id for e in check_collection_dimensions()] == ["openguru.E002"]
    with pytest.raises(PermanentServiceError):
        services.guru_collection_sync(guru_id=guru.pk)
    assert "reembed" in _record(guru).error


def test_prepare_stops_on_a_failed_vector_check_before_creating_the_first_admin(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """`./openguru start` readies the data dir in one process (backend/launcher.py): a collection built for
    another embedder stops the start, and no administrator is created whose password nobody saw."""
    settings.STATIC_ROOT = str(tmp_path / "static")
    _create(django_capture_on_commit_callbacks, slug="dims")
    embedder = settings.OPENGURU_EMBEDDER
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "128"}
    with pytest.raises(SystemCheckError, match="openguru.E001"):
        call_command("prepare", "--check-tag", "vectors")
    assert not get_user_model().objects.filter(is_superuser=True).exists()

    settings.OPENGURU_EMBEDDER = embedder
    capsys.readouterr()
    call_command("prepare", "--check-tag", "vectors", "--manage-command", "./openguru manage")
    out = capsys.readouterr().out
    # Only the first admin's banner: migrate's and collectstatic's progress would bury it.
    assert "username: admin" in out and "(change it later: ./openguru manage changepassword admin)" in out
    assert "Operations to perform" not in out and "static file" not in out
    assert (tmp_path / "static" / "js" / "sse.js.gz").exists()  # pre-compressed for WhiteNoise
    call_command("prepare")
    assert "An administrator already exists: admin" in capsys.readouterr().out
