"""Recovery of runs whose task died: re-queued once the run is provably dead, orphans deleted, bounded."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters import registry
from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.core.counters import counter_store
from backend.core.locks import cache_lock
from backend.gurus.models import Guru
from backend.pipeline.types import Chunk
from backend.pipeline.types import SourceKind as ChunkKind
from backend.sources import indexing
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.recovery import MAX_RECOVERIES, source_lock_name, source_recover_stalled
from backend.sources.services import source_create, source_schedule_index
from tests.fakes.pdfs import pdf_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

PAGES = [[f"Line {i} of page {p}: a worker acknowledges a task after it ran." for i in range(300)] for p in range(3)]


class DyingEmbedder(HashingEmbedder):
    """Embeds one batch, then the worker 'dies' (SystemExit is not caught by the run)."""

    def __init__(self) -> None:
        super().__init__(dimension=384)
        self.left = 1

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.left == 0:
            raise SystemExit("killed")
        self.left -= 1
        return super().embed_documents(texts)


def _generations(milvus: MilvusVectorStore, collection: str, source_id: int) -> list[tuple[str, int]]:
    hits = milvus.search_dense(collection, registry.embedder().embed_query("worker task"), top_k=2000,
                               source_ids=[source_id])
    return sorted((hit.chunk_id, hit.generation) for hit in hits)


def _indexed(guru: Guru, capture: DjangoCaptureOnCommitCallbacks) -> DataSource:
    with capture(execute=True):
        upload = SimpleUploadedFile("r.pdf", pdf_bytes(PAGES), content_type="application/pdf")
        source = source_create(guru=guru, kind=SourceKind.PDF, upload=upload)
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED
    return source


def _silence(source: DataSource, seconds: int = 300) -> None:
    DataSource.objects.filter(pk=source.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=seconds))


def test_a_dead_run_is_requeued_and_its_half_written_generation_is_replaced_cleanly(
    guru: Guru, collection: str, milvus: MilvusVectorStore, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _indexed(guru, django_capture_on_commit_callbacks)
    run = source_schedule_index(source=source)
    monkeypatch.setattr(registry, "embedder", DyingEmbedder)
    with pytest.raises(SystemExit):
        indexing.source_index(source_id=source.pk, run=run)
    monkeypatch.undo()
    # An orphan the rerun would not overwrite (e.g. the page text changed since the dead attempt).
    milvus.upsert(collection, [Chunk(id="orphan", text="worker task orphan", vector=tuple([0.1] * 384),
                                     source_id=source.pk, generation=run, kind=ChunkKind.PDF)])
    _silence(source)
    assert {g for _, g in _generations(milvus, collection, source.pk)} == {run - 1, run}

    with django_capture_on_commit_callbacks(execute=True):
        assert source_recover_stalled() == 1
    source.refresh_from_db()
    rows = _generations(milvus, collection, source.pk)
    assert (source.status, source.indexed_generation, source.recoveries) == (SourceStatus.INDEXED, run, 1)
    assert len(rows) == source.chunk_count and {g for _, g in rows} == {run}
    assert "orphan" not in {cid for cid, _ in rows}


def test_a_live_run_is_never_touched(
    guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    source = _indexed(guru, django_capture_on_commit_callbacks)
    DataSource.objects.filter(pk=source.pk).update(status=SourceStatus.PROCESSING, heartbeat_at=timezone.now())
    assert source_recover_stalled() == 0  # it beat recently
    _silence(source)
    with cache_lock(source_lock_name(source.pk)):  # silent, but still holding its lock: alive
        assert source_recover_stalled() == 0
    assert DataSource.objects.get(pk=source.pk).status == SourceStatus.PROCESSING


def test_a_queued_run_is_requeued_only_when_its_message_looks_lost(
    guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    source = _indexed(guru, django_capture_on_commit_callbacks)
    source_schedule_index(source=source)  # queued just now (its message is dropped: no on_commit run)
    assert source_recover_stalled() == 0
    with django_capture_on_commit_callbacks(execute=True):
        assert source_recover_stalled(at_start=True) == 1  # a worker starting re-publishes it
    assert DataSource.objects.get(pk=source.pk).status == SourceStatus.INDEXED


def test_a_run_that_keeps_dying_ends_failed_with_a_reason(
    guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    source = _indexed(guru, django_capture_on_commit_callbacks)
    DataSource.objects.filter(pk=source.pk).update(status=SourceStatus.PROCESSING, recoveries=MAX_RECOVERIES)
    _silence(source)
    assert source_recover_stalled() == 0
    source.refresh_from_db()
    assert source.status == SourceStatus.FAILED
    assert "stopped 4 times without finishing" in source.error_message


def test_an_unexpected_error_fails_the_source_instead_of_leaving_it_processing(
    guru: Guru, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    def broken() -> HashingEmbedder:
        raise ZeroDivisionError("a bug")

    source = _indexed(guru, django_capture_on_commit_callbacks)
    monkeypatch.setattr(registry, "embedder", broken)
    with pytest.raises(ZeroDivisionError), django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert source.status == SourceStatus.FAILED
    assert "unexpected error (ZeroDivisionError)" in source.error_message
    assert "a bug" not in source.error_message  # details go to the log


def test_a_held_lock_is_renewed_and_a_lost_one_is_not() -> None:
    store = counter_store()
    with cache_lock("renew-me", ttl=1) as held:
        assert held.renew(60)
        time.sleep(1.2)  # past the first TTL: only the renewal keeps it held (a TTL is time itself)
        assert not store.claim(held.key, "someone-else", ttl=5)
        store.release(held.key, held.token)
        assert store.claim(held.key, "someone-else", ttl=5)
        assert not held.renew(60)  # another holder took it: no renewal on their lease
