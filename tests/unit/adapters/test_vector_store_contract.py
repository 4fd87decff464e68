"""One contract for every VectorStore: the in-memory fake and real Milvus (Lite or server)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.vector_store.fake import InMemoryVectorStore
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.pipeline.errors import DimensionMismatchError, PermanentServiceError
from backend.pipeline.ports import VectorStore
from backend.pipeline.types import Chunk, HybridHit, SourceKind

pytestmark = pytest.mark.production_profile

DIM = 64
EMBEDDER = HashingEmbedder(dimension=DIM)


@pytest.fixture
def name() -> str:
    return f"contract_{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["memory", "milvus"])
def store(request: pytest.FixtureRequest, milvus_uri: str, name: str) -> Iterator[VectorStore]:
    if request.param == "memory":
        yield InMemoryVectorStore(namespace=uuid.uuid4().hex)
        return
    milvus = MilvusVectorStore(uri=milvus_uri)
    yield milvus
    # Only this test's collections (all named from `name`): in the production pass every test process shares one
    # Milvus server, and dropping every "contract_" collection dropped another process's in the middle of its test.
    for created in milvus.list_collections():
        if created.startswith(name):
            milvus.drop_collection(created)


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


CELERY_CHUNKS = [
    "Celeryd workers acknowledge every task after it runs if late acknowledgement is enabled.",
    "Late acknowledgement means a worker acknowledges the task message only after the task returns.",
    "If a celeryd worker dies mid task, late acknowledgement lets the broker redeliver its message.",
    "Acknowledging each task lately makes celeryd jobs safer to retry after a worker crash.",
    "Settings reference: CELERY_TASK_ACKS_LATE defaults to False; see the configuration page for broker pools, "
    "result backends and logging.",
    "Milvus stores dense vectors and sparse BM25 vectors in one collection.",
]


def hybrid(store: VectorStore, name: str, query: str, *, top_k: int = 10, candidates: int = 50,
           vector_text: str | None = None) -> list[HybridHit]:
    vector = EMBEDDER.embed_query(query if vector_text is None else vector_text)
    return store.search_hybrid(name, query_text=query, query_vector=vector, top_k=top_k, candidates=candidates)


def test_hybrid_exact_identifier_wins_through_bm25(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(i, text) for i, text in enumerate(CELERY_CHUNKS)])
    query = "when are celery tasks acknowledged CELERY_TASK_ACKS_LATE"
    dense = store.search_dense(name, EMBEDDER.embed_query(query), top_k=6)
    assert [h.chunk_id for h in dense].index("s1-g1-4") >= 2  # the dense leg alone ranks it low
    hits = hybrid(store, name, query)
    top = hits[0]
    assert top.hit.chunk_id == "s1-g1-4"
    assert (top.sparse_rank, top.dense_rank) == (1, [h.chunk_id for h in dense].index("s1-g1-4") + 1)
    assert top.hit.score == pytest.approx(1 / 61 + 1 / (60 + top.dense_rank))
    assert top.hit.kind is SourceKind.WEBSITE and top.hit.metadata == {"title": "page 4", "chunk_index": 4}


LEXICAL_CHUNKS = [
    "Every command returns an exit code; check the exit code in scripts.",
    "The command stops with exit code 2 when its arguments cannot be parsed.",
    "Retry code 3 times; code 3 means the broker was busy.",
    "MAX_CONTENT_LENGTH sets the largest request body the server accepts.",
    "The content length of each form field is limited too.",
    "Load settings with app.config.from_file and a loader.",
    "Pass --port to choose the port the server listens on.",
]


@pytest.mark.parametrize(("query", "first", "matched"), [
    ("exit code 2", 1, {0, 1, 2}),  # the number is a term: the whole phrase beats "exit code" and "code 3"
    ("What is MAX_CONTENT_LENGTH?", 3, {3}),  # a snake_case name is one term, not "content" or "length"
    ("app.config.from_file", 5, {5}),  # a dotted path is its parts: app, config, from_file
    ("--port", 6, {6}),
])
def test_bm25_keeps_numbers_and_identifiers(store: VectorStore, name: str, query: str, first: int,
                                            matched: set[int]) -> None:
    """Both stores analyse text alike (runs of word characters, lowercased), so the fake ranks as Milvus does."""
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(i, text) for i, text in enumerate(LEXICAL_CHUNKS)])
    by_sparse = sorted((h for h in hybrid(store, name, query, vector_text="unrelated") if h.sparse_rank),
                       key=lambda h: h.sparse_rank or 0)
    assert by_sparse[0].hit.chunk_id == f"s1-g1-{first}"
    assert {int(h.hit.chunk_id.rsplit("-", 1)[1]) for h in by_sparse} == matched


def test_hybrid_paraphrase_comes_through_dense_leg(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "Workers retried failing jobs automatically."),
                        chunk(1, "Milvus stores dense vectors in one collection."),
                        chunk(2, "PDF pages keep their page numbers for citations.")])
    hits = hybrid(store, name, "retrying a failed job")
    assert hits[0].hit.chunk_id == "s1-g1-0"
    assert (hits[0].dense_rank, hits[0].sparse_rank) == (1, None)
    assert all(h.sparse_rank is None for h in hits)


def test_hybrid_reports_each_legs_rank(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    texts = ["alpha beta gamma", "alpha beta delta", "alpha beta epsilon", "zeta eta theta iota",
             "omega zzyzx_token lorem ipsum dolor sit amet"]
    store.upsert(name, [chunk(i, text) for i, text in enumerate(texts)])
    hits = hybrid(store, name, "zzyzx_token", vector_text="alpha beta gamma", top_k=3, candidates=3)
    dense = [h.chunk_id for h in store.search_dense(name, EMBEDDER.embed_query("alpha beta gamma"), top_k=3)]
    assert "s1-g1-4" not in dense
    ranks = {h.hit.chunk_id: (h.dense_rank, h.sparse_rank) for h in hits}
    assert ranks == {dense[0]: (1, None), dense[1]: (2, None), "s1-g1-4": (None, 1)}
    assert [h.hit.score for h in hits] == sorted((h.hit.score for h in hits), reverse=True)
    for h in hits:
        assert h.hit.score == pytest.approx(sum(1 / (60 + r) for r in (h.dense_rank, h.sparse_rank) if r))


def test_hybrid_without_query_terms_is_dense_only(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "alpha beta"), chunk(1, "gamma delta")])
    hits = hybrid(store, name, "?! ...", vector_text="alpha beta")
    assert [(h.hit.chunk_id, h.dense_rank, h.sparse_rank) for h in hits] == [("s1-g1-0", 1, None),
                                                                                ("s1-g1-1", 2, None)]


def test_hybrid_returns_the_stored_vectors(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    chunks = [chunk(i, text) for i, text in enumerate(CELERY_CHUNKS)]
    store.upsert(name, chunks)
    hits = hybrid(store, name, "celeryd worker acknowledgement")
    assert len(hits) == len(chunks)
    by_id = {c.id: c.vector for c in chunks}
    for h in hits:
        assert isinstance(h.vector, tuple) and len(h.vector) == DIM
        assert all(isinstance(x, float) for x in h.vector)
        assert h.vector == pytest.approx(by_id[h.hit.chunk_id], abs=1e-6)  # stored as float32


def test_hybrid_honours_top_k(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(i, text) for i, text in enumerate(CELERY_CHUNKS)])
    assert len(hybrid(store, name, "celeryd worker acknowledgement", top_k=3)) == 3
    assert len(hybrid(store, name, "celeryd worker acknowledgement", top_k=1, candidates=1)) == 1
    # top_k above `candidates` still fills top_k: each leg fetches at least top_k.
    assert len(hybrid(store, name, "celeryd", top_k=5, candidates=2)) == 5


def test_hybrid_on_empty_collection_is_empty(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    assert hybrid(store, name, "anything at all") == []


def test_hybrid_returns_every_generation(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "reindex keeps old text", generation=1),
                        chunk(0, "reindex writes new text", generation=2),
                        chunk(0, "another source text", source_id=7, generation=3)])
    hits = hybrid(store, name, "reindex text")
    assert sorted((h.hit.source_id, h.hit.generation) for h in hits) == [(1, 1), (1, 2), (7, 3)]


def _orphaned(store: VectorStore, name: str) -> None:
    """Two live chunks (source 1 at generation 1, source 7 at 3) under ten better-matching orphans."""
    store.ensure_collection(name, dimension=DIM)
    orphans = [chunk(i, "visibility timeout redelivers unacknowledged tasks", generation=2) for i in range(10)]
    store.upsert(name, [*orphans, chunk(0, "the visibility timeout of the broker", generation=1),
                        chunk(0, "redelivered tasks after a timeout", source_id=7, generation=3),
                        chunk(1, "an old generation of source 7 about visibility timeouts", source_id=7, generation=1)])


def test_live_generations_are_filtered_inside_the_hybrid_search(store: VectorStore, name: str) -> None:
    _orphaned(store, name)
    query, live = "visibility timeout redelivers unacknowledged tasks", {1: 1, 7: 3}
    unfiltered = hybrid(store, name, query, top_k=3, candidates=3)
    assert {h.hit.generation for h in unfiltered} == {2}  # filtering afterwards would leave nothing
    vector = EMBEDDER.embed_query(query)
    hits = store.search_hybrid(name, query_text=query, query_vector=vector, top_k=3, candidates=3, live=live)
    assert sorted((h.hit.source_id, h.hit.generation) for h in hits) == [(1, 1), (7, 3)]
    assert all(h.dense_rank is not None for h in hits)


def test_live_generations_are_filtered_inside_the_dense_search(store: VectorStore, name: str) -> None:
    _orphaned(store, name)
    vector = EMBEDDER.embed_query("visibility timeout redelivers unacknowledged tasks")
    hits = store.search_dense(name, vector, top_k=2, live={1: 1, 7: 3})
    assert sorted((h.source_id, h.generation) for h in hits) == [(1, 1), (7, 3)]
    hits = store.search_dense(name, vector, top_k=5, live={1: 1, 7: 3}, source_ids=[7])
    assert [(h.source_id, h.generation) for h in hits] == [(7, 3)]


def test_no_live_generation_finds_nothing(store: VectorStore, name: str) -> None:
    _orphaned(store, name)
    vector = EMBEDDER.embed_query("visibility timeout")
    assert store.search_hybrid(name, query_text="visibility timeout", query_vector=vector, top_k=5, live={}) == []
    assert store.search_dense(name, vector, top_k=5, live={}) == []


def test_a_new_collection_is_loaded(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    assert store.unloaded_collections(prefix=name) == []


def test_scan_reads_every_chunk_back_in_bounded_batches(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    assert list(store.scan(name)) == []
    written = [chunk(i, f"{text} ({i})", source_id=1 + i % 3, generation=i % 2)
               for i, text in enumerate(CELERY_CHUNKS * 4)]
    store.upsert(name, written)
    batches = list(store.scan(name, batch_size=5))
    assert all(1 <= len(batch) <= 5 for batch in batches)
    read = {c.id: c for batch in batches for c in batch}
    assert len(read) == sum(len(batch) for batch in batches) == len(written)
    for original in written:
        back = read[original.id]
        assert (back.text, back.source_id, back.generation, back.kind, back.metadata) == (
            original.text, original.source_id, original.generation, original.kind, original.metadata)
        assert back.vector == pytest.approx(original.vector, abs=1e-6)  # float32 in Milvus
    store.upsert(name, batches[0])  # what scan returns can be written back as it is
    info = store.collection_info(name)
    assert info is not None and info.row_count == len(written)


def test_source_chunks_reads_one_generation_and_filters_text_literally(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    texts = ["100% of tasks", "hello_world", "Hello there", 'a "quote" and \\ back', "héllo wörld"]
    store.upsert(name, [chunk(i, text) for i, text in enumerate(texts)])
    store.upsert(name, [chunk(9, "hello_world", generation=2), chunk(8, "hello_world", source_id=2)])
    every = store.source_chunks(name, source_id=1, generation=1, limit=100)
    assert sorted(h.text for h in every) == sorted(texts)
    assert {h.chunk_id for h in every} == {f"s1-g1-{i}" for i in range(len(texts))}
    assert all(h.metadata["title"] == f"page {h.metadata['chunk_index']}" and h.score == 0.0 for h in every)
    assert len(store.source_chunks(name, source_id=1, generation=1, limit=2)) == 2

    def matching(needle: str) -> list[str]:
        return sorted(h.text for h in store.source_chunks(name, source_id=1, generation=1, limit=100, contains=needle))

    assert matching("hello") == ["hello_world"]  # case-sensitive, and other sources/generations are not read
    assert matching("100%") == ["100% of tasks"] and matching("o_w") == ["hello_world"]
    assert matching("%") == ["100% of tasks"] and matching("_") == ["hello_world"]  # wildcards match themselves
    assert matching('"quote" and \\') == ['a "quote" and \\ back']
    assert matching("wörld") == ["héllo wörld"]
    assert matching('x" or source_id == 2 or text like "') == []  # quoted, never part of the expression


def test_chunks_reads_the_ids_that_exist(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    store.upsert(name, [chunk(0, "first passage"), chunk(1, "second passage"), chunk(2, "third", generation=2)])
    found = store.chunks(name, ["s1-g1-1", "s1-g2-2", "s1-g1-7"])
    assert sorted((h.chunk_id, h.text, h.generation, h.score) for h in found) == [
        ("s1-g1-1", "second passage", 1, 0.0), ("s1-g2-2", "third", 2, 0.0)]
    assert found[0].metadata["chunk_index"] in (1, 2)
    assert store.chunks(name, []) == []


def test_chunk_vectors_read_the_stored_vectors_by_id(store: VectorStore, name: str) -> None:
    store.ensure_collection(name, dimension=DIM)
    stored = [chunk(0, "first passage"), chunk(1, "second passage")]
    store.upsert(name, stored)
    found = store.chunk_vectors(name, ["s1-g1-1", "s1-g1-9"])
    assert [(h.hit.chunk_id, h.hit.text, h.dense_rank, h.sparse_rank) for h in found] == [
        ("s1-g1-1", "second passage", None, None)]
    assert found[0].vector == pytest.approx(stored[1].vector, abs=1e-6)
    assert found[0].hit.metadata["chunk_index"] == 1
    assert store.chunk_vectors(name, []) == []


def test_reading_chunks_warns_of_a_missing_session_timestamp_once_at_most(
        milvus_uri: str, name: str, caplog: pytest.LogCaptureFixture) -> None:
    # Milvus Lite keeps no session timestamps: pymilvus warns on every chunk read, which buried the worker's log.
    milvus = MilvusVectorStore(uri=milvus_uri)
    milvus.ensure_collection(name, dimension=DIM)
    milvus.upsert(name, [chunk(i, f"passage {i}") for i in range(3)])
    with caplog.at_level(logging.WARNING, logger="pymilvus"):
        for _ in range(3):
            assert sum(len(batch) for batch in milvus.scan(name, batch_size=2)) == 3
    assert sum("mvccTs" in record.getMessage() for record in caplog.records) <= 1
    milvus.drop_collection(name)
