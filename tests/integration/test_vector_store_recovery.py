"""Real Milvus: a released collection still answers and is reported; orphan generations take no candidate slot."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store import milvus as milvus_module
from backend.adapters.vector_store.milvus import MilvusVectorStore, shared_client
from backend.answering.events import EventKind
from backend.answering.services import AskRequest, answer_stream
from backend.core.selectors import health_check
from backend.gurus.models import Guru, VectorCollection
from backend.gurus.selectors import NOT_LOADED_PROBLEM, guru_collection_report
from backend.pipeline.types import Chunk, SourceKind
from backend.sources.models import DataSource
from backend.sources.services import source_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

MANUAL = [["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
           "The countdown argument sets how many seconds to wait before the retry.",
           "max_retries limits how many times a task is retried before it fails for good."],
          ["Choosing a broker", "RabbitMQ and Redis are the supported brokers for production use."]]
QUESTION = "how do I retry a task after a few seconds"
ORPHANS = 8600  # as many as the interrupted re-index of issue #12 left behind


def _chunks(texts: list[str], generation: int = 1) -> list[Chunk]:
    vectors = registry.embedder().embed_documents(texts)
    return [Chunk(id=f"g{generation}-{i}", text=t, vector=tuple(v), source_id=1, generation=generation,
                  kind=SourceKind.PDF) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]


def _release(uri: str, name: str) -> None:
    """What a Milvus Lite restart does to every collection."""
    shared_client(uri).release_collection(name)


def _name(settings: SettingsWrapper, suffix: str) -> str:
    return f"{settings.OPENGURU_COLLECTION_PREFIX}{suffix}"


def test_searches_of_a_released_collection_load_it_and_succeed(
    milvus: MilvusVectorStore, milvus_uri: str, settings: SettingsWrapper
) -> None:
    name = _name(settings, "released")
    milvus.ensure_collection(name, dimension=registry.embedder().dimension)
    milvus.upsert(name, _chunks(["workers retry failing tasks", "brokers deliver messages"]))
    vector = registry.embedder().embed_query("retry tasks")
    _release(milvus_uri, name)
    assert milvus.search_dense(name, vector, top_k=1)[0].text == "workers retry failing tasks"
    _release(milvus_uri, name)
    assert milvus.collection_info(name).loaded is False  # type: ignore[union-attr]
    assert milvus.unloaded_collections(prefix=name) == [name]
    hits = milvus.search_hybrid(name, query_text="retry tasks", query_vector=vector, top_k=2)
    assert [h.hit.text for h in hits][0] == "workers retry failing tasks"
    assert milvus.collection_info(name).loaded is True  # type: ignore[union-attr]
    assert milvus.unloaded_collections(prefix=name) == []


def test_the_first_use_in_a_process_loads_released_collections(
    milvus: MilvusVectorStore, milvus_uri: str, settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, other = _name(settings, "mine"), f"other_install_{settings.OPENGURU_COLLECTION_PREFIX}"
    for collection in (name, other):
        milvus.ensure_collection(collection, dimension=8)
        _release(milvus_uri, collection)
    try:
        monkeypatch.setattr(milvus_module, "_clients", {})  # as in a process that has not used the store yet
        fresh = MilvusVectorStore(uri=milvus_uri, load_prefix=settings.OPENGURU_COLLECTION_PREFIX)
        assert fresh.unloaded_collections(prefix=name) == []
        assert fresh.unloaded_collections(prefix=other) == [other]  # another install's collection is left alone
    finally:
        milvus.drop_collection(other)


def test_reports_and_health_name_a_released_collection_until_a_search_loads_it(
    milvus: MilvusVectorStore, milvus_uri: str, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        guru = GuruFactory(slug="released")
    name = VectorCollection.objects.get(guru_id=guru.pk).name
    _release(milvus_uri, name)
    assert guru_collection_report(guru=guru).problem == NOT_LOADED_PROBLEM
    out = _collections_output()
    assert "not loaded" in out and "released" in out
    assert health_check().vector_store.startswith("error: 1 collection(s) not loaded")
    response = Client().get("/api/v1/health/")
    assert response.status_code == 503 and response.json()["vector_store"].startswith("error: 1 collection")
    maintainer = Client()
    maintainer.force_login(UserFactory(username="keeper", is_superuser=True, is_staff=True))
    assert "not loaded in the vector store" in maintainer.get("/dashboard/g/released/settings/").content.decode()
    milvus.search_dense(name, registry.embedder().embed_query("anything"), top_k=1)
    assert guru_collection_report(guru=guru).problem == ""
    assert health_check().vector_store == "ok"


def _collections_output() -> str:
    import io

    out = io.StringIO()
    call_command("collections", stdout=out)
    return out.getvalue()


@pytest.fixture
def indexed_guru(milvus: MilvusVectorStore, settings: SettingsWrapper,
                 django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="orphans", name="Celery Guru", domain_knowledge="the Celery task queue")
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Celery manual")
    return guru


def _write_orphans(guru: Guru, source: DataSource) -> None:
    """An unfinished re-index: chunks of a generation that never went live, matching the question best."""
    assert source.indexed_generation is not None
    orphan_generation = source.indexed_generation + 1
    vector = tuple(registry.embedder().embed_query(QUESTION))
    name = VectorCollection.objects.get(guru_id=guru.pk).name
    store = registry.vector_store()
    for start in range(0, ORPHANS, 1000):
        store.upsert(name, [
            Chunk(id=f"orphan-{i}", text=f"{QUESTION}? {QUESTION}.", vector=vector, source_id=source.pk,
                  generation=orphan_generation, kind=SourceKind.PDF, metadata={"title": "half written"})
            for i in range(start, min(start + 1000, ORPHANS))
        ])


def _done(guru: Guru, question: str) -> tuple[dict[str, Any], str]:
    stream = list(answer_stream(AskRequest(guru=guru, question=question, channel="WEB")))
    assert not [e.data for e in stream if e.kind is EventKind.ERROR]
    text = "".join(e.data["text"] for e in stream if e.kind is EventKind.DELTA)
    return next(e.data for e in stream if e.kind is EventKind.DONE), text


def test_orphan_chunks_of_an_unfinished_generation_never_crowd_out_the_live_ones(indexed_guru: Guru) -> None:
    source = DataSource.objects.get(guru=indexed_guru)
    _write_orphans(indexed_guru, source)
    done, text = _done(indexed_guru, QUESTION)
    assert done["out_of_context"] is False and done["trust_score"] >= 0.5
    assert "self.retry()" in text and "half written" not in text
    assert {r["source_id"] for r in done["references"]} == {source.pk}
