"""Time creating a guru's Milvus Lite collection: our path vs. pymilvus' one-call create.

Baseline: `create_collection(schema, index_params=…)`, which waits for each index with a fixed sleep.
Measured: `MilvusVectorStore.ensure_collection` (create, indexes without waiting, load). Both run in
the same process on the same Milvus Lite data dir, alternating.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.adapters.vector_store.milvus import (  # noqa: E402
    MilvusVectorStore,
    _collection_schema,
    _index_params,
    shared_client,
)

DIMENSION = 384


def _baseline(uri: str, name: str) -> float:
    client = shared_client(uri)
    start = time.perf_counter()
    client.create_collection(
        collection_name=name, schema=_collection_schema(DIMENSION), index_params=_index_params(),
        consistency_level="Strong",
    )
    return time.perf_counter() - start


def _ours(store: MilvusVectorStore, name: str) -> float:
    start = time.perf_counter()
    store.ensure_collection(name, dimension=DIMENSION)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 10")
    rounds = 3 if parser.parse_args().quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "bench.db")
        store = MilvusVectorStore(uri=uri)
        store.list_collections()  # open the data dir before timing
        base, ours = [], []
        for i in range(rounds):
            base.append(_baseline(uri, f"baseline_{i}"))
            ours.append(_ours(store, f"ours_{i}"))
    base_ms, ours_ms = statistics.median(base) * 1000, statistics.median(ours) * 1000
    print(f"rounds={rounds} baseline_create_ms={base_ms:.1f} (pymilvus create_collection with index_params)")
    print(f"collection_create_ms={ours_ms:.1f} baseline_ms={base_ms:.1f} target=0.1 ratio={ours_ms / base_ms:.3f}")


if __name__ == "__main__":
    main()
