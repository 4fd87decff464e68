"""Time MilvusVectorStore.search_hybrid (dense + BM25, RRF) against plain search_dense on Milvus Lite.

Synthetic rows: random unit 384-d vectors and 150-word texts drawn from a Zipf (s=1) vocabulary of
30,000 words whose most frequent ranks are English function words (fusion.STOP_WORDS), as in English,
where ~100 function words make about half of all tokens. Queries are 8 words from the same
distribution plus a random unit vector. `--plain-vocabulary` uses made-up words only (no function
words, so nothing is dropped from queries): the worst case for the BM25 leg. Rows are flushed and left
to compact before timing (search latency drops ~10 s after a flush, DEPENDENCIES.md §2); all paths
are timed on the same queries, rotating which goes first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pymilvus import AnnSearchRequest, RRFRanker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.adapters.vector_store.milvus import HIT_FIELDS, MilvusVectorStore, shared_client  # noqa: E402
from backend.pipeline.fusion import STOP_WORDS, query_terms  # noqa: E402
from backend.pipeline.types import Chunk, SourceKind  # noqa: E402

DIMENSION = 384
VOCABULARY = 30_000
WORDS_PER_ROW = 150
WORDS_PER_QUERY = 8
BATCH = 2_000
TOP_K = 10
CANDIDATES = 50
COLLECTION = "bench_hybrid"


def _vocabulary(plain: bool) -> list[str]:
    head = [] if plain else sorted(STOP_WORDS)
    return head + [f"w{i}" for i in range(VOCABULARY - len(head))]


def _words(rng: np.random.Generator, vocabulary: list[str], count: int) -> list[str]:
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    return [vocabulary[i] for i in rng.choice(len(vocabulary), size=count, p=weights / weights.sum())]


def _unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _load(store: MilvusVectorStore, rng: np.random.Generator, vocabulary: list[str], rows: int) -> float:
    start = time.perf_counter()
    for first in range(0, rows, BATCH):
        count = min(BATCH, rows - first)
        vectors = _unit_vectors(rng, count)
        words = _words(rng, vocabulary, count * WORDS_PER_ROW)
        store.upsert(COLLECTION, [
            Chunk(id=f"row-{first + i}", text=" ".join(words[i * WORDS_PER_ROW:(i + 1) * WORDS_PER_ROW]),
                  vector=tuple(vectors[i].tolist()),
                  source_id=(first + i) % 50, generation=1, kind=SourceKind.WEBSITE, metadata={"row": first + i})
            for i in range(count)
        ])
    return time.perf_counter() - start


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _p90_ms(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1] * 1000


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _pymilvus_hybrid(uri: str, text: str, vector: list[float]) -> object:
    """The rejected alternative (server-side RRF, no per-leg ranks) on the same stop-word-free terms."""
    terms = " ".join(query_terms(text))
    requests = [
        AnnSearchRequest(data=[vector], anns_field="vector", param={"metric_type": "COSINE"}, limit=CANDIDATES),
        AnnSearchRequest(data=[terms], anns_field="sparse", param={"metric_type": "BM25"}, limit=CANDIDATES),
    ]
    return shared_client(uri).hybrid_search(COLLECTION, requests if terms else requests[:1], ranker=RRFRanker(60),
                                             limit=TOP_K, output_fields=[*HIT_FIELDS, "vector"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3,000 rows and a shorter settle (< 60 s)")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--settle", type=float, default=15.0, help="seconds to wait after flush for compaction")
    parser.add_argument("--plain-vocabulary", action="store_true", help="no function words (worst case)")
    args = parser.parse_args()
    rows, settle = (3_000, 10.0) if args.quick else (args.rows, args.settle)
    rng = np.random.default_rng(7)
    vocabulary = _vocabulary(args.plain_vocabulary)
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "bench.db")
        store = MilvusVectorStore(uri=uri)
        store.ensure_collection(COLLECTION, dimension=DIMENSION)
        load_s = _load(store, rng, vocabulary, rows)
        shared_client(uri).flush(COLLECTION)
        time.sleep(settle)
        queries = [(" ".join(_words(rng, vocabulary, WORDS_PER_QUERY)), vector.tolist())
                   for vector in _unit_vectors(rng, args.queries)]
        paths: dict[str, Callable[[str, list[float]], object]] = {
            "hybrid": lambda t, v: store.search_hybrid(COLLECTION, query_text=t, query_vector=v, top_k=TOP_K,
                                                       candidates=CANDIDATES),
            "dense": lambda t, v: store.search_dense(COLLECTION, v, top_k=TOP_K),
            "pymilvus_hybrid": lambda t, v: _pymilvus_hybrid(uri, t, v),
        }
        for text, vector in queries[:5]:
            for path in paths.values():
                path(text, vector)
        samples: dict[str, list[float]] = {name: [] for name in paths}
        names = list(paths)
        for i, (text, vector) in enumerate(queries):
            for name in names[i % len(names):] + names[:i % len(names)]:
                samples[name].append(_timed(lambda p=paths[name], t=text, v=vector: p(t, v)))
    print(f"rows={rows} queries={args.queries} top_k={TOP_K} candidates={CANDIDATES} load_s={load_s:.1f} "
          f"settle_s={settle:.0f} vocabulary={'plain' if args.plain_vocabulary else 'english-like'}")
    for name, values in samples.items():
        print(f"{name}: median_ms={_median_ms(values):.1f} p90_ms={_p90_ms(values):.1f}")
    hybrid_ms, dense_ms = _median_ms(samples["hybrid"]), _median_ms(samples["dense"])
    print(f"hybrid_ms={hybrid_ms:.1f} dense_ms={dense_ms:.1f} target=<=3.0 ratio={hybrid_ms / dense_ms:.2f}")


if __name__ == "__main__":
    main()
