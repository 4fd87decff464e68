"""PDF uploads index page by page; bad files fail clearly; a crashed re-index loses nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters import registry
from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus.models import Guru
from backend.sources import indexing
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create, source_schedule_index
from backend.sources.writer import EMBED_BATCH
from tests.fakes.pdfs import pdf_bytes, write_encrypted_pdf

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

BIG_PAGES = [[f"Line {i} of page {p}: consumers prefetch messages and ack them after work." for i in range(400)]
             for p in range(3)]
PAGES = [
    [f"Page one line {i}: the broker keeps messages until a worker acknowledges them." for i in range(40)],
    [f"Page two line {i}: visibility timeouts redeliver unacknowledged tasks to workers." for i in range(40)],
    [f"Page three line {i}: rate limits throttle how often a task may run per minute." for i in range(40)],
]


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def _rows(milvus: MilvusVectorStore, collection: str, source_id: int) -> list[tuple[str, int]]:
    hits = milvus.search_dense(collection, registry.embedder().embed_query("workers tasks"), top_k=1000,
                               source_ids=[source_id])
    return sorted((h.chunk_id, h.generation) for h in hits)


def test_pdf_indexes_with_page_links(
    guru: Guru, collection: str, milvus: MilvusVectorStore,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("broker.pdf", pdf_bytes(PAGES)))
    source.refresh_from_db()
    assert (source.status, source.progress_done, source.progress_total) == (SourceStatus.INDEXED, 3, 3)
    hit = milvus.search_dense(collection, registry.embedder().embed_query("rate limits per minute"), top_k=1)[0]
    assert hit.metadata["page"] == 3 and hit.metadata["link"].endswith("#page=3")
    assert Path(source.file.path).exists()


def test_same_pdf_twice_is_refused(guru: Guru) -> None:
    from backend.core.errors import Conflict

    source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("a.pdf", pdf_bytes(PAGES)))
    with pytest.raises(Conflict):
        source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("copy.pdf", pdf_bytes(PAGES)))
    assert DataSource.objects.count() == 1


def test_encrypted_pdf_fails_with_a_clear_message(
    guru: Guru, tmp_path: Path, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    data = write_encrypted_pdf(tmp_path / "locked.pdf", PAGES).read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("locked.pdf", data))
    source.refresh_from_db()
    assert source.status == SourceStatus.FAILED
    assert "password" in source.error_message.lower()


class CrashingEmbedder(HashingEmbedder):
    """Dies like a killed worker (SystemExit escapes every `except Exception`) after `batches` batches."""

    def __init__(self, batches: int) -> None:
        super().__init__(dimension=384)
        self.left = batches

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.left == 0:
            raise SystemExit("worker killed")
        self.left -= 1
        return super().embed_documents(texts)


def test_a_crash_mid_reindex_keeps_old_chunks_and_the_rerun_leaves_no_duplicates(
    guru: Guru, collection: str, milvus: MilvusVectorStore, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("b.pdf", pdf_bytes(BIG_PAGES)))
    source.refresh_from_db()
    live = _rows(milvus, collection, source.pk)
    assert len(live) == source.chunk_count > EMBED_BATCH and {g for _, g in live} == {1}  # more than one batch

    run = source_schedule_index(source=source)
    monkeypatch.setattr(registry, "embedder", lambda: CrashingEmbedder(batches=1))
    with pytest.raises(SystemExit):
        indexing.source_index(source_id=source.pk, run=run)
    source.refresh_from_db()
    assert (source.status, source.indexed_generation) == (SourceStatus.PROCESSING, 1)
    after_crash = _rows(milvus, collection, source.pk)
    assert set(live) <= set(after_crash)  # every live chunk still answers
    assert {g for _, g in after_crash} == {1, 2}  # plus a half-written generation nobody reads yet

    monkeypatch.undo()
    indexing.source_index(source_id=source.pk, run=run)  # the broker redelivers the same run
    source.refresh_from_db()
    final = _rows(milvus, collection, source.pk)
    assert (source.status, source.indexed_generation) == (SourceStatus.INDEXED, 2)
    assert len(final) == len({cid for cid, _ in final}) == source.chunk_count == len(live)
    assert {g for _, g in final} == {2}


def test_pdf_citations_link_to_the_app_which_serves_the_file(
    guru: Guru, collection: str, milvus: MilvusVectorStore, client: Client,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    data = pdf_bytes(PAGES)
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.PDF, upload=_upload("served.pdf", data))
    hit = milvus.search_dense(collection, registry.embedder().embed_query("broker"), top_k=1)[0]
    assert hit.metadata["link"] == f"/sources/{source.pk}/file#page=1"
    response = client.get(f"/sources/{source.pk}/file")
    assert response.status_code == 200 and b"".join(response) == data
    DataSource.objects.filter(pk=source.pk).update(private=True)
    assert client.get(f"/sources/{source.pk}/file").status_code == 404
