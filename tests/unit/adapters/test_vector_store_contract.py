"""One contract for every VectorStore: the in-memory fake and real Milvus (Lite or server)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.vector_store.fake import InMemoryVectorStore
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.pipeline.errors import DimensionMismatchError, PermanentServiceError
from backend.pipeline.ports import VectorStore
from backend.pipeline.types import Chunk, SourceKind

pytestmark = pytest.mark.production_profile

DIM = 64
EMBEDDER = HashingEmbedder(dimension=DIM)


@pytest.fixture(params=["memory", "milvus"])
def store(request: pytest.FixtureRequest, milvus_uri: str) -> Iterator[VectorStore]:
    if request.param == "memory":
        yield InMemoryVectorStore(namespace=uuid.uuid4().hex)
        return
    milvus = MilvusVectorStore(uri=milvus_uri)
    yield milvus
    for name in milvus.list_collections():
        if name.startswith("contract_"):
            milvus.drop_collection(name)


@pytest.fixture
def name() -> str:
    return f"contract_{uuid.uuid4().hex[:12]}"


def chunk(idx: int, text: str, *, source_id: int = 1, generation: int = 1) -> Chunk:
    vector = tuple(EMBEDDER.embed_documents([text])[0])
    return Chunk(
        id=f"s{source_id}-g{generation}-{idx}",
        text=text,
        vector=vector,
        source_id=source_id,
        generation=generation,
        kind=SourceKind.WEBSITE,
        metadata={"title": f"page {idx}", "chunk_index": idx},
    )


def test_ensure_collection_is_idempotent(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.ensure_collection(name, dimension=DIM)
    info = store.collection_info(name)
    assert info is not None
    assert (info.dimension, info.row_count, info.loaded) == (DIM, 0, True)
    assert name in store.list_collections()


def test_dimension_mismatch_is_refused(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    with pytest.raises(DimensionMismatchError) as excinfo:
        store.ensure_collection(name, dimension=DIM * 2)
    assert excinfo.value.collection_dim == DIM
    assert "Re-embed" in str(excinfo.value)


def test_missing_collection_has_no_info(store: VectorStore, name: str) -> None:
    assert store.collection_info(name) is None


def test_upsert_replaces_by_id_and_search_finds_nearest(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "celery workers retry tasks"), chunk(1, "milvus stores vectors")])
    store.upsert(name, [chunk(1, "milvus stores dense and sparse vectors")])
    info = store.collection_info(name)
    assert info is not None and info.row_count == 2
    hits = store.search_dense(name, EMBEDDER.embed_query("how do celery workers retry"), top_k=2)
    assert hits[0].chunk_id == "s1-g1-0"
    assert hits[0].kind is SourceKind.WEBSITE
    assert hits[0].metadata == {"title": "page 0", "chunk_index": 0}
    assert hits[0].score > hits[1].score
    texts = {h.text for h in hits}
    assert "milvus stores dense and sparse vectors" in texts


def test_search_filters_by_source(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "alpha beta", source_id=1), chunk(0, "alpha beta gamma", source_id=2)])
    hits = store.search_dense(name, EMBEDDER.embed_query("alpha beta"), top_k=5, source_ids=[2])
    assert [h.source_id for h in hits] == [2]


def test_delete_where_removes_old_generations_only(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "old text", generation=1), chunk(0, "new text", generation=2)])
    store.upsert(name, [chunk(0, "other source", source_id=9)])
    store.delete_where(name, source_id=1, generation_lt=2)
    hits = store.search_dense(name, EMBEDDER.embed_query("text"), top_k=10)
    assert sorted((h.source_id, h.generation) for h in hits) == [(1, 2), (9, 1)]
    store.delete_where(name, source_id=1)
    hits = store.search_dense(name, EMBEDDER.embed_query("text"), top_k=10)
    assert [h.source_id for h in hits] == [9]


def test_rename_keeps_data_searchable_and_is_idempotent(store: VectorStore, name: str) -> None:
    new = f"{name}_renamed"
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "renames keep their rows")])
    store.rename_collection(name, new)
    store.rename_collection(name, new)
    assert store.collection_info(name) is None
    info = store.collection_info(new)
    assert info is not None and info.row_count == 1 and info.loaded
    hits = store.search_dense(new, EMBEDDER.embed_query("renames keep rows"), top_k=1)
    assert hits[0].text == "renames keep their rows"


def test_rename_onto_existing_collection_is_refused(store: VectorStore, name: str) -> None:
    other = f"{name}_other"
    store.ensure_collection(name, dimension=DIM)
    store.ensure_collection(other, dimension=DIM)
    with pytest.raises(PermanentServiceError):
        store.rename_collection(name, other)


def test_drop_is_idempotent(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.drop_collection(name)
    store.drop_collection(name)
    assert store.collection_info(name) is None
    assert name not in store.list_collections()


def test_delete_one_generation_and_by_ids(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "live", generation=1), chunk(0, "half written", generation=2),
                        chunk(1, "also live", generation=1)])
    store.delete_where(name, source_id=1, generation=2)
    store.delete_ids(name, ["s1-g1-1", "no-such-id"])
    hits = store.search_dense(name, EMBEDDER.embed_query("live"), top_k=10)
    assert [(h.chunk_id, h.generation) for h in hits] == [("s1-g1-0", 1)]
