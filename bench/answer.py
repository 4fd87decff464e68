"""Answer pipeline without the LLM: retrieval + rerank latency against the raw Milvus hybrid call (issue #13).

Corpus: deterministic technical documentation (bench/answer_corpus.py: 20 subsystems, ~60 sentence templates
filled with page-specific names and numbers, no sentence twice; ~120 words / ~195 word pieces a chunk) in
40 sources of one guru. Vectors: the embedded default's real embedder (all-MiniLM-L6-v2, int8 ONNX), embedded
once and cached row by row under --cache-dir (`--prepare` fills it for 100k chunks: ~30 min on 2 idle cores). A
`--quick` run on a cold cache does not wait for that: each (product, topic) pair gets the real vector of its
first chunk ("pooled" in the summary; Milvus Lite's index is a flat scan, so search cost does not depend on
the values). Queries: questions drawn like the pages, embedded by the real embedder at query time.

Measured, per query, alternating which goes first: ours = `retrieval.services.retrieve()` exactly as an
answer calls it (its database reads, query embedding, dense + BM25 search with the live-generation filter,
the local fusion reranker over the 40 candidates, contexts); raw = one pymilvus `hybrid_search` with the same
two requests (COSINE dense, BM25 on the same stop-word-free terms, 50 each, the same filter), RRFRanker(60),
40 rows with the fields we read, given the query vector (no embedding). On Milvus Lite (in-process client)
and on the Milvus server process (`milvus-lite server`, backend/core/sidecars.py), at 10k then 100k chunks.
Then the LLM calls before the first answer token (bench/answer_calls.py), against the sequential pipeline.
Targets: p50 <= 100 ms at 10k; at 100k ours <= 1.0 x raw; <= 2 LLM calls for a first question and a follow-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.answer_corpus import CorpusChunk, CorpusWriter, questions  # noqa: E402
from bench.answer_vectors import cache_hits, cached_vectors, pooled_vectors  # noqa: E402

SIZES = (10_000, 100_000)
SOURCES = 40
SLUG = "bench-answer"
CANDIDATES, LEG_LIMIT = 40, 50  # retrieval.services.CANDIDATES; the adapter's per-leg default


def configure(data_dir: Path) -> None:
    """Test settings (throwaway SQLite) with the embedded default's models; before Django is imported."""
    os.environ.update(DJANGO_SETTINGS_MODULE="backend.config.settings.test", OPENGURU_DATA_DIR=str(data_dir),
                      DATABASE_URL=f"sqlite:///{data_dir / 'bench.sqlite3'}")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from backend.config.celery_app import app

    app.conf.update(task_always_eager=False, broker_url="memory://")  # nothing queued is run
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    settings.OPENGURU_RERANKER = {"BACKEND": "local"}
    call_command("migrate", verbosity=0)


@contextmanager
def milvus(uri: str) -> Iterator[None]:
    from django.test import override_settings

    with override_settings(OPENGURU_VECTOR_STORE={"BACKEND": "milvus", "URI": uri, "TOKEN": "", "TIMEOUT": "60"}):
        yield


def make_guru() -> tuple[Any, str, list[int]]:
    """The guru, its READY collection's name, and its 40 sources' ids (all live at generation 1)."""
    from django.utils import timezone

    from backend.gurus.models import CollectionStatus, Guru, VectorCollection
    from backend.gurus.services import collection_name_for
    from backend.sources.models import DataSource, SourceKind, SourceStatus

    guru, _ = Guru.objects.get_or_create(slug=SLUG, defaults={"name": "Ops Guru", "domain_knowledge": "operations"})
    name = collection_name_for(SLUG)
    VectorCollection.objects.update_or_create(guru_id=guru.pk, defaults={
        "name": name, "dimension": 384, "status": CollectionStatus.READY})
    if not guru.sources.exists():
        DataSource.objects.bulk_create([DataSource(
            guru=guru, kind=SourceKind.WEBSITE, url=f"https://docs.example.com/s{n}", title=f"Manual {n}",
            status=SourceStatus.INDEXED, generation=1, indexed_generation=1, last_indexed_at=timezone.now())
            for n in range(SOURCES)])
    return guru, name, list(guru.sources.order_by("pk").values_list("pk", flat=True))


def load(name: str, chunks: list[CorpusChunk], vectors: Any, sources: list[int], first: int) -> float:
    """Upsert chunks[first:] as the writer stores them (title, link, doc_key, chunk_index); seconds taken."""
    from backend.adapters import registry
    from backend.pipeline.types import Chunk, SourceKind

    store, start = registry.vector_store(), time.perf_counter()
    store.ensure_collection(name, dimension=384)
    for low in range(first, len(chunks), 2000):
        store.upsert(name, [Chunk(
            id=f"c{i}", text=c.text, vector=tuple(vectors[i].tolist()), source_id=sources[c.source - 1],
            generation=1, kind=SourceKind.WEBSITE,
            metadata={"title": c.title, "link": c.doc_key, "doc_key": c.doc_key, "chunk_index": c.chunk_index})
            for i, c in enumerate(chunks[low:low + 2000], start=low)])
    from backend.adapters.vector_store.milvus import shared_client

    shared_client(store._uri).flush(name)  # type: ignore[attr-defined]  # sealed segments, as after a while
    return time.perf_counter() - start


def raw_hybrid(uri: str, name: str, text: str, vector: list[float], expr: str) -> object:
    """One pymilvus hybrid_search with the requests and ranker our adapter fuses itself."""
    from pymilvus import AnnSearchRequest, RRFRanker

    from backend.adapters.vector_store.milvus import HIT_FIELDS, shared_client
    from backend.pipeline.fusion import RRF_K, query_terms

    terms = " ".join(query_terms(text))
    requests = [AnnSearchRequest(data=[vector], anns_field="vector", param={"metric_type": "COSINE"},
                                 limit=LEG_LIMIT, expr=expr),
                AnnSearchRequest(data=[terms], anns_field="sparse", param={"metric_type": "BM25"},
                                 limit=LEG_LIMIT, expr=expr)]
    return shared_client(uri).hybrid_search(name, requests if terms else requests[:1], ranker=RRFRanker(RRF_K),
                                             limit=CANDIDATES, output_fields=[*HIT_FIELDS, "vector"], timeout=60)


@dataclass
class Samples:
    ours: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    raw_pipeline: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=lambda: {"embed": [], "search": [], "rerank": []})


def _timed_parts(parts: dict[str, list[float]]) -> Callable[[], None]:
    """Time the embedder's, the store's and the reranker's calls inside retrieve(); returns the undo."""
    from backend.adapters import registry

    targets = [(registry.embedder(), "embed_query", "embed"), (registry.vector_store(), "search_hybrid", "search"),
               (registry.reranker(), "rerank", "rerank")]

    def wrap(fn: Callable[..., Any], key: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[key].append(time.perf_counter() - start)
        return timed

    for obj, method, key in targets:
        setattr(obj, method, wrap(getattr(obj, method), key))

    def undo() -> None:
        for obj, method, _ in targets:
            obj.__dict__.pop(method, None)

    return undo


def measure(guru: Any, name: str, queries: list[str], *, settle: float) -> Samples:
    """Warm up until latency is steady (the flush's compaction settles), then time both paths per query."""
    from backend.adapters import registry
    from backend.adapters.vector_store.milvus import live_filter
    from backend.answering.selectors import thresholds_for
    from backend.pipeline.llm_types import Passage
    from backend.retrieval.services import _live_generations, retrieve

    rerank_threshold, _ = thresholds_for(guru)
    uri, expr = registry.vector_store()._uri, live_filter(_live_generations(guru)[0])  # type: ignore[attr-defined]
    vectors = registry.embedder().embed_documents(queries)
    ours = lambda q: retrieve(guru=guru, query=q, rerank_threshold=rerank_threshold)  # noqa: E731
    raw = lambda i: raw_hybrid(uri, name, queries[i], vectors[i], expr)  # noqa: E731
    embed, rerank = registry.embedder().embed_query, registry.reranker().rerank  # not the timed wrappers

    def raw_pipeline(i: int) -> object:
        """The raw call inside the same steps, one after the other: embed, hybrid_search, rerank."""
        vector = embed(queries[i])
        hits = raw_hybrid(uri, name, queries[i], vector, expr)[0]  # type: ignore[index]
        return rerank(queries[i], [Passage(text=h["entity"]["text"], vector=tuple(h["entity"]["vector"]),
                                           title=str(h["entity"]["metadata"].get("title", ""))) for h in hits],
                      query_vector=vector)

    _settle(lambda: ours(queries[0]), settle)
    samples = Samples()
    paths: dict[str, Callable[[int], object]] = {"ours": lambda i: ours(queries[i]), "raw": raw,
                                                 "raw_pipeline": raw_pipeline}
    undo = _timed_parts(samples.parts)
    try:
        for i in range(len(queries)):
            for key in list(paths)[i % 3:] + list(paths)[:i % 3]:
                start = time.perf_counter()
                paths[key](i)
                getattr(samples, key).append(time.perf_counter() - start)
    finally:
        undo()
    return samples


def _settle(call: Callable[[], object], budget: float) -> None:
    """Repeat a query until two rounds of five agree within 10 % (or `budget` seconds pass)."""
    deadline, previous = time.monotonic() + budget, None
    while time.monotonic() < deadline:
        rounds = []
        for _ in range(5):
            start = time.perf_counter()
            call()
            rounds.append(time.perf_counter() - start)
        current = statistics.median(rounds)
        if previous is not None and abs(current - previous) <= 0.1 * previous:
            return
        previous = current


def corpus_vectors(chunks: list[CorpusChunk], cache: Path, *, quick: bool) -> tuple[np.ndarray, str]:
    """Real cached vectors; a quick run on a cold cache pools them instead of embedding for minutes."""
    from backend.adapters import registry

    texts, embedder = [c.text for c in chunks], registry.embedder()
    if quick and cache_hits(texts, cache, dimension=384) < len(texts):
        return pooled_vectors(chunks, embedder.embed_documents), "pooled"

    def progress(done: int, total: int) -> None:
        if done % 5120 < 256 or done == total:
            sys.stderr.write(f"embedding the corpus into {cache}: {done}/{total}\n")

    vectors = cached_vectors(texts, embedder.embed_documents, cache, dimension=384, capacity=SIZES[-1],
                             progress=progress)
    return vectors, "cached-real"


@contextmanager
def deployment(kind: str, data_dir: Path) -> Iterator[str]:
    """Milvus Lite opened in this process, or the Milvus server process on loopback; yields its URI."""
    if kind == "lite":
        yield str(data_dir / "milvus-lite" / "bench.db")
        return
    from backend.core.sidecars import start_milvus_lite

    server = start_milvus_lite(data_dir=data_dir / "milvus-server", log_dir=data_dir)
    try:
        yield server.url
    finally:
        server.stop()


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def report(kind: str, size: int, load_s: float, samples: Samples) -> dict[str, float]:
    row = {"ours_p50": ms(samples.ours, 0.5), "ours_p95": ms(samples.ours, 0.95), "raw_p50": ms(samples.raw, 0.5),
           "raw_p95": ms(samples.raw, 0.95), "pipeline_p50": ms(samples.raw_pipeline, 0.5)}
    total = sum(samples.ours)
    shares = " ".join(f"{k}={sum(v) / total:.0%}({statistics.median(v) * 1000:.1f}ms)"
                      for k, v in samples.parts.items())
    print(f"{kind} {size // 1000}k chunks (loaded in {load_s:.0f} s): ours p50={row['ours_p50']:.1f} ms "
          f"p95={row['ours_p95']:.1f} ms | raw hybrid_search p50={row['raw_p50']:.1f} ms p95={row['raw_p95']:.1f} ms"
          f" | ratio p50={row['ours_p50'] / row['raw_p50']:.2f} | raw embed+hybrid_search+rerank p50="
          f"{row['pipeline_p50']:.1f} ms (ratio {row['ours_p50'] / row['pipeline_p50']:.2f}) | shares: {shares}",
          flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k chunks, Milvus Lite only, 20 queries (< 60 s)")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--settle", type=float, default=30.0, help="at most this long waiting for steady latency")
    parser.add_argument("--cache-dir", type=Path, default=REPO / "var" / "bench-cache" / "answer")
    parser.add_argument("--prepare", action="store_true", help="only embed the 100k corpus into the cache")
    parser.add_argument("--milvus", default="", help="lite, server or both (default: both; --quick: lite)")
    parser.add_argument("--sizes", default="", help="comma-separated chunk counts (default 10000,100000)")
    args = parser.parse_args()
    sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else SIZES[:1] if args.quick else SIZES
    kinds = args.milvus.split(",") if args.milvus else ["lite"] if args.quick else ["lite", "server"]
    with tempfile.TemporaryDirectory(prefix="bench-answer-") as tmp:
        configure(Path(tmp))
        from backend.adapters import registry

        registry.embedder().load()  # type: ignore[attr-defined]
        chunks = list(CorpusWriter().chunks(SIZES[-1] if args.prepare else sizes[-1]))
        vectors, how = corpus_vectors(chunks, args.cache_dir, quick=args.quick)
        if args.prepare:
            print(f"cached {len(vectors)} vectors in {args.cache_dir}")
            return
        queries = questions(20 if args.quick else args.queries)
        llm_kind = kinds[0]
        guru, name, sources = make_guru()
        rows, calls = {}, None
        for kind in kinds:
            with deployment(kind, Path(tmp)) as uri, milvus(uri):
                loaded = 0
                for size in sizes:
                    load_s = load(name, chunks[:size], vectors, sources, loaded)
                    loaded = size
                    rows[(kind, size)] = report(kind, size, load_s, measure(guru, name, queries, settle=args.settle))
                    if calls is None and kind == llm_kind:
                        calls = llm_calls(guru, quick=args.quick)
                registry.vector_store().drop_collection(name)
        summary(rows, calls or {}, how, sizes[-1])


def llm_calls(guru: Any, *, quick: bool) -> dict[str, float]:
    """Part two (bench/answer_calls.py) on the collection just measured: mean calls deep per grader and turn."""
    from bench import answer_calls
    from tests.fakes.http import serve
    from tests.fakes.openai_server import OpenAIFakeServer

    server = OpenAIFakeServer()
    with serve(server.route) as url:
        server.base_url = url
        results = answer_calls.run(guru, server, questions(2 if quick else 10, seed=5), delay=0.1 if quick else 0.2)
    means = {}
    for key, turns in results.items():
        for turn_kind, values in turns.items():
            print(f"LLM {key} {turn_kind}: {answer_calls.summarise(values)}", flush=True)
            depths = [t.depth for t in values if t is not None]
            means[f"{key}/{turn_kind}"] = statistics.fmean(depths) if depths else float("nan")
    return means


def summary(rows: dict[tuple[str, int], dict[str, float]], calls: dict[str, float], how: str, top: int) -> None:
    small = rows[min(rows, key=lambda key: key[1])]
    ratio, (kind, _) = max((rows[key]["ours_p50"] / rows[key]["raw_p50"], key) for key in rows if key[1] == top)
    graders = ("agreeing", "strict", "generous")

    def per_grader(pipeline: str, turn: str, digits: int) -> str:
        return "/".join(f"{calls[g + '/' + pipeline + '/' + turn]:.{digits}f}" for g in graders)

    turns = " ".join(f"llm_calls_{turn}={per_grader('ours', turn, 2)}(sequential:{per_grader('sequential', turn, 0)})"
                     for turn in ("first", "follow_up")) if calls else ""
    top_row = rows[(kind, top)]
    print(f"retrieval_p50_ms_{small_size(rows)}={small['ours_p50']:.1f} retrieval_p95_ms={small['ours_p95']:.1f} "
          f"p50_ms_{top // 1000}k_{kind}={top_row['ours_p50']:.1f} raw_p50_ms_{top // 1000}k_{kind}="
          f"{top_row['raw_p50']:.1f} vs_raw_embed_search_rerank={top_row['ours_p50'] / top_row['pipeline_p50']:.2f} "
          f"{turns} graders=agreeing/strict/generous vectors={how} "
          f"target=p50<=100ms@10k,<=1.0xraw@100k,<=2calls ratio={ratio:.2f}")


def small_size(rows: dict[tuple[str, int], dict[str, float]]) -> str:
    return f"{min(size for _, size in rows) // 1000}k"


if __name__ == "__main__":
    main()
