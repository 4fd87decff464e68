"""Milvus (server or Milvus Lite) vector store: one collection per guru, dense + BM25 fields."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
from pymilvus import DataType, Function, FunctionType, MilvusClient
from pymilvus.client.types import LoadState
from pymilvus.exceptions import MilvusException

from backend.adapters.vector_store.filters import like_literal, live_filter
from backend.adapters.vector_store.milvus_fresh import on_fresh_collection
from backend.adapters.vector_store.rows import chunk, hit, hybrid_hit
from backend.pipeline.errors import DimensionMismatchError, PermanentServiceError, VectorStoreError
from backend.pipeline.fusion import BM25_B, BM25_K1, query_terms, reciprocal_rank_fusion
from backend.pipeline.types import Chunk, CollectionInfo, Hit, HybridHit

logger = logging.getLogger(__name__)


class _OnceOnly(logging.Filter):
    """Lets a message through the first time only. pymilvus warns "failed to get mvccTs from milvus server, use
    client-side ts instead" on every chunk read from Milvus Lite, which keeps no session timestamps (the client's
    clock is right for it): once tells a server's operator, every read only buries the log."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text, self.seen = text, False

    def filter(self, record: logging.LogRecord) -> bool:
        if self.text not in record.getMessage():
            return True
        first, self.seen = not self.seen, True
        return first


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(_OnceOnly("failed to get mvccTs"))

TEXT_MAX_LENGTH = 65535
ID_MAX_LENGTH = 128
SCALAR_FILTER_FIELDS = ("source_id", "generation", "kind")
HIT_FIELDS = ["text", "source_id", "generation", "kind", "metadata"]
# Seconds one call may take, pymilvus' own retries included (MILVUS_TIMEOUT): without a timeout it retries
# an unreachable server 75 times (minutes), so a question would hang instead of failing with a clear error.
CALL_TIMEOUT = 10.0
LOAD_TIMEOUT = 120.0  # at least: loading reads every segment of a collection into memory
# Milvus' ErrCollectionNotLoaded; Milvus Lite says "is in state 'released'", the server "not loaded".
NOT_LOADED_CODE = 101
VENDOR_ERRORS = (MilvusException, grpc.RpcError, grpc.FutureTimeoutError)
# gRPC backs off reconnecting to a server that went away by up to 120 s, and pymilvus' reconnect reuses the
# process-wide subchannel in that backoff: a restarted Milvus stayed unreachable for the next calls. A
# channel of its own that retries within a second recovers on the first question after Milvus is back.
# Keep-alive: pymilvus pings every 10 s; gRPC C-core servers (milvus-lite's) allow one ping per 5 min without
# data and answer more with GOAWAY "too_many_pings" (logged by every idle process). Dead servers are found
# by the call timeout and the fast reconnect instead.
SERVER_MIN_PING_INTERVAL_MS = 300_000
RECONNECT_OPTIONS = {
    "grpc.use_local_subchannel_pool": 1,
    "grpc.initial_reconnect_backoff_ms": 200,
    "grpc.min_reconnect_backoff_ms": 200,
    "grpc.max_reconnect_backoff_ms": 1000,
    "grpc.keepalive_time_ms": SERVER_MIN_PING_INTERVAL_MS,
    "grpc.keepalive_timeout_ms": 20_000,
}

_clients: dict[tuple[str, str], MilvusClient] = {}
_clients_lock = threading.Lock()


def shared_client(uri: str, token: str = "", *, load_prefix: str = "", timeout: float = CALL_TIMEOUT) -> MilvusClient:
    """One client per (uri, token) per process; its first use loads the released collections.

    Milvus Lite lets only one process open a data dir and races when threads open it concurrently,
    so the client is created once, under a lock (DEPENDENCIES.md §2). Milvus Lite forgets which
    collections were loaded when it restarts, and a released collection refuses every search, so the
    collections named `load_prefix…` are loaded before the first call (a no-op when they already are).
    """
    key = (uri, token)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _connect(uri, token)
            _load_released(client, load_prefix, timeout)
            _clients[key] = client
        return client


def _load_released(client: MilvusClient, prefix: str, timeout: float) -> None:
    """Load this install's released collections; a failure is logged and left to the retry on first read."""
    try:
        names = [n for n in client.list_collections(timeout=timeout) if n.startswith(prefix)]
        for name in names:
            if not _is_loaded(client.get_load_state(name, timeout=timeout)):
                client.load_collection(name, timeout=max(timeout, LOAD_TIMEOUT))
                logger.info("loaded vector collection %s (it was released)", name)
    except VENDOR_ERRORS as exc:
        logger.warning("could not load the vector collections at start: %s", exc)


def _is_loaded(state: dict[str, Any]) -> bool:
    return bool(state.get("state") == LoadState.Loaded)


def is_not_loaded_error(exc: BaseException) -> bool:
    """The call failed because the collection is released / not loaded (loading it and retrying helps)."""
    if not isinstance(exc, MilvusException):
        return False
    message = str(exc.message).lower()
    return exc.code == NOT_LOADED_CODE or "not loaded" in message or "state 'released'" in message


def _connect(uri: str, token: str) -> MilvusClient:
    is_local = not uri.startswith(("http://", "https://", "tcp://", "unix:"))
    if is_local:
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    auth = {"token": token} if token else {}
    try:
        return MilvusClient(uri=uri, grpc_options=RECONNECT_OPTIONS, **auth)
    except MilvusException as exc:
        if is_local:
            raise PermanentServiceError(
                f"Cannot open the Milvus Lite data dir {uri}: {exc}. Only one process may open it; if "
                "`./openguru start` is running, point this process at its sidecar with "
                "MILVUS_URI=http://127.0.0.1:19530 (or stop it)."
            ) from exc
        raise VectorStoreError(f"Milvus at {uri} is not reachable: {exc}") from exc


def _collection_schema(dimension: int) -> Any:
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_LENGTH)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
    schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX_LENGTH, enable_analyzer=True)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("source_id", DataType.INT64)
    schema.add_field("generation", DataType.INT64)
    schema.add_field("kind", DataType.VARCHAR, max_length=32)
    schema.add_field("metadata", DataType.JSON)
    schema.add_function(
        Function(
            name="text_bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    return schema


def _index_params() -> Any:
    params = MilvusClient.prepare_index_params()
    params.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
    # k1/b pinned to Milvus server defaults: Lite defaults k1 to 1.5, and the in-memory fake uses these too.
    params.add_index(
        field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
        params={"bm25_k1": BM25_K1, "bm25_b": BM25_B},
    )
    # Filter keys are top-level scalars with an index: JSON-path filters are full scans (~1 s at 20k).
    for name in SCALAR_FILTER_FIELDS:
        params.add_index(field_name=name, index_type="INVERTED")
    return params


class MilvusVectorStore:
    """VectorStore over pymilvus' MilvusClient; vendor errors become VectorStoreError / PermanentServiceError."""

    def __init__(self, *, uri: str, token: str = "", load_prefix: str = "", timeout: float = CALL_TIMEOUT) -> None:
        self._uri = uri
        self._token = token
        self._load_prefix = load_prefix
        self._timeout = timeout

    @property
    def _client(self) -> MilvusClient:
        return shared_client(self._uri, self._token, load_prefix=self._load_prefix, timeout=self._timeout)

    def _call(self, what: str, fn: Any, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        try:
            return fn(*args, timeout=timeout or self._timeout, **kwargs)
        except VENDOR_ERRORS as exc:
            raise VectorStoreError(f"Milvus failed to {what}: {exc}") from exc

    def _read(self, what: str, name: str, method: str, **kwargs: Any) -> Any:
        """A search or get on `name`; a "released / not loaded" failure loads the collection and retries once.

        Milvus Lite comes back from a restart with every collection released (and a renamed collection
        is released too); without this every guru would stop answering until someone re-loaded it.
        """
        try:
            return getattr(self._client, method)(collection_name=name, timeout=self._timeout, **kwargs)
        except VENDOR_ERRORS as exc:
            if not is_not_loaded_error(exc):
                raise VectorStoreError(f"Milvus failed to {what}: {exc}") from exc
            logger.warning("vector collection %s was not loaded (%s); loading it and retrying", name, exc)
        self._load(name)
        return self._call(what, getattr(self._client, method), collection_name=name, **kwargs)

    def _load(self, name: str) -> None:
        timeout = max(self._timeout, LOAD_TIMEOUT)
        self._call("load a collection", self._client.load_collection, name, timeout=timeout)

    def ensure_collection(self, name: str, *, dimension: int) -> None:
        info = self.collection_info(name)
        if info is not None:
            if info.dimension != dimension:
                raise DimensionMismatchError(
                    collection=name, collection_dim=info.dimension, embedder_dim=dimension
                )
            if not info.loaded:
                self._load(name)
            return
        client = self._client
        self._call(
            "create a collection",
            client.create_collection,
            collection_name=name,
            schema=_collection_schema(dimension),
            consistency_level="Strong",
        )
        # Passing index_params to create_collection makes pymilvus poll each index with a fixed
        # 0.5 s sleep (2.5 s per guru); on an empty collection the indexes are ready at once.
        indexes = _index_params()
        on_fresh_collection(lambda: self._call("create indexes", client.create_index, name, indexes, sync=False))
        on_fresh_collection(lambda: self._load(name))
        logger.info("created vector collection %s (dim %d)", name, dimension)

    def rename_collection(self, old: str, new: str) -> None:
        client = self._client
        has_old = self._call("look up a collection", client.has_collection, old)
        has_new = self._call("look up a collection", client.has_collection, new)
        if has_old and has_new:
            raise PermanentServiceError(f"Cannot rename collection '{old}' to '{new}': '{new}' already exists.")
        if has_old:
            self._call("rename a collection", client.rename_collection, old_name=old, new_name=new)
            logger.info("renamed vector collection %s -> %s", old, new)
        # A renamed collection comes back released; searches fail until it is loaded again.
        if has_old or has_new:
            self._load(new)

    def drop_collection(self, name: str) -> None:
        if self._call("look up a collection", self._client.has_collection, name):
            self._call("drop a collection", self._client.drop_collection, name)
            logger.info("dropped vector collection %s", name)

    def collection_info(self, name: str) -> CollectionInfo | None:
        client = self._client
        if not self._call("look up a collection", client.has_collection, name):
            return None
        described = self._call("describe a collection", client.describe_collection, name)
        dimension = next(
            int(f["params"]["dim"]) for f in described["fields"] if f["type"] == DataType.FLOAT_VECTOR
        )
        stats = self._call("read collection stats", client.get_collection_stats, name)
        loaded = _is_loaded(self._call("read the load state", client.get_load_state, name))
        return CollectionInfo(name=name, dimension=dimension, row_count=int(stats["row_count"]), loaded=loaded)

    def list_collections(self) -> list[str]:
        return sorted(self._call("list collections", self._client.list_collections))

    def unloaded_collections(self, *, prefix: str = "") -> list[str]:
        client = self._client
        names = [n for n in self.list_collections() if n.startswith(prefix)]
        return [n for n in names if not _is_loaded(self._call("read the load state", client.get_load_state, n))]

    def upsert(self, name: str, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        rows = [
            {
                "id": c.id,
                "vector": list(c.vector),
                "text": c.text,
                "source_id": c.source_id,
                "generation": c.generation,
                "kind": c.kind.value,
                "metadata": c.metadata,
            }
            for c in chunks
        ]
        self._call("write chunks", self._client.upsert, collection_name=name, data=rows)

    def delete_where(
        self, name: str, *, source_id: int, generation_lt: int | None = None, generation: int | None = None
    ) -> None:
        # Only integers reach the expression (typed, never user strings), so it cannot be injected.
        expr = f"source_id == {int(source_id)}"
        if generation_lt is not None:
            expr += f" and generation >= 0 and generation < {int(generation_lt)}"
        if generation is not None:
            expr += f" and generation == {int(generation)}"
        self._call("delete chunks", self._client.delete, collection_name=name, filter=expr)

    def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        if ids:
            self._call("delete chunks", self._client.delete, collection_name=name, ids=list(ids))

    def scan(self, name: str, *, batch_size: int = 1000) -> Iterator[list[Chunk]]:
        # query_iterator pages by primary key server-side, so a batch is all that is ever held here.
        iterator = self._read("read chunks", name, "query_iterator", batch_size=batch_size,
                              output_fields=["id", "vector", *HIT_FIELDS])
        try:
            while batch := self._call("read chunks", _next_batch, iterator):
                yield [chunk(row) for row in batch]
        finally:
            iterator.close()

    def source_chunks(
        self, name: str, *, source_id: int, generation: int, limit: int, contains: str = ""
    ) -> list[Hit]:
        expr = f"source_id == {int(source_id)} and generation == {int(generation)}"
        if contains:
            expr += f" and text like {like_literal(contains)}"
        iterator = self._read("read chunks", name, "query_iterator", batch_size=min(max(limit, 1), 1000),
                              limit=max(limit, 1), filter=expr, output_fields=["id", *HIT_FIELDS])
        found: list[Hit] = []
        try:
            while len(found) < limit and (batch := self._call("read chunks", _next_batch, iterator)):
                found += [hit(row, str(row["id"]), 0.0) for row in batch]
        finally:
            iterator.close()
        return found[:limit]

    def chunks(self, name: str, ids: Sequence[str]) -> list[Hit]:
        if not ids:
            return []
        rows = self._read("read chunks", name, "get", ids=list(ids), output_fields=["id", *HIT_FIELDS])
        return [hit(row, str(row["id"]), 0.0) for row in rows]

    def chunk_vectors(self, name: str, ids: Sequence[str]) -> list[HybridHit]:
        if not ids:
            return []
        rows = self._read("read chunks", name, "get", ids=list(ids), output_fields=["id", *HIT_FIELDS, "vector"])
        return [hybrid_hit(row) for row in rows]

    def search_dense(
        self, name: str, vector: Sequence[float], *, top_k: int, source_ids: Sequence[int] | None = None,
        live: Mapping[int, int] | None = None,
    ) -> list[Hit]:
        if live is not None and not live:
            return []  # no source publishes a generation: nothing may be read
        clauses = [live_filter(live)] if live is not None else []
        if source_ids is not None:
            clauses.append(f"source_id in {[int(s) for s in source_ids]}")
        result = self._read(
            "search", name, "search", data=[list(vector)], anns_field="vector", limit=top_k,
            filter=" and ".join(f"({c})" for c in clauses), output_fields=HIT_FIELDS,
            search_params={"metric_type": "COSINE"},
        )
        return [hit(row["entity"], str(row["id"]), float(row["distance"])) for row in result[0]]

    def search_hybrid(
        self, name: str, *, query_text: str, query_vector: Sequence[float], top_k: int, candidates: int = 50,
        live: Mapping[int, int] | None = None, summaries: Collection[int] = (),
    ) -> list[HybridHit]:
        # Two id-only searches fused here, then one get() of the top_k rows, instead of client.hybrid_search:
        # hybrid_search returns only the fused score, not each leg's rank, and is no faster on Milvus Lite
        # (medians, hybrid_search vs this: 5k rows 24.5 vs 23.0 ms, 20k 39.8 vs 40.9 ms; bench/hybrid_search.py
        # 20k 37.0 vs 36.9 ms) since it runs the same two searches server-side and projects every output
        # field, vector included, for all 2 x candidates rows. Legs in two threads gained nothing (GIL-bound).
        if live is not None and not live and not summaries:
            return []
        # The generation filter runs inside both searches, so chunks of an unfinished or abandoned
        # generation never take a candidate slot from the live ones.
        expr = live_filter(live, summaries) if live is not None else ""
        limit = max(candidates, top_k)  # each leg fetches at least top_k so top_k is honoured
        dense = self._leg_ids(name, "vector", [float(x) for x in query_vector], "COSINE", limit, expr)
        # Stop words are dropped client-side (see fusion.STOP_WORDS); a query left with no terms skips BM25.
        terms = " ".join(query_terms(query_text))
        sparse = self._leg_ids(name, "sparse", terms, "BM25", limit, expr) if terms else []
        fused = reciprocal_rank_fusion([dense, sparse])[:top_k]
        if not fused:
            return []
        rows = self._read("read chunks", name, "get", ids=[f.key for f in fused], output_fields=[*HIT_FIELDS, "vector"])
        by_id = {str(row["id"]): row for row in rows}
        # A chunk deleted between the searches and the get() (a re-index finishing) is skipped.
        return [hybrid_hit(by_id[f.key], f) for f in fused if f.key in by_id]

    def _leg_ids(self, name: str, field: str, data: Any, metric: str, limit: int, expr: str) -> list[str]:
        """Ids of one leg, best first.

        Only the order is used, because the BM25 "distance" differs by deployment: Milvus Lite returns
        -score (best first is the most negative, e.g. -10.7), while Milvus documents a positive relevance
        score; both list the best hit first.
        """
        result = self._read(
            "search", name, "search", data=[data], anns_field=field, limit=limit, filter=expr,
            output_fields=["id"], search_params={"metric_type": metric},
        )
        return [str(row["id"]) for row in result[0]]



def _next_batch(iterator: Any, *, timeout: float) -> list[dict[str, Any]]:
    return list(iterator.next())  # the iterator keeps the timeout it was opened with
