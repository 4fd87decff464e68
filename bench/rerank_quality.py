"""Ranking quality and latency of the local fusion reranker vs plain dense ranking on a labelled corpus.

Setup (not timed): every passage of bench/data/rerank_corpus.json is embedded once with LocalMiniLMEmbedder,
as indexing would. Per query: embed the query, take the 20 passages nearest by cosine (the dense first
stage), then compare the dense order (baseline) with LocalFusionReranker's order of the same candidates.
Reports MRR@10 and nDCG@10 (graded gains 2^rel - 1), the reranker's latency for 20 candidates, and how
the absolute scores split: answering passages (rel 2) vs passages from another topic. Queries marked
"holdout" were written after the weights were set and are also reported on their own.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder  # noqa: E402
from backend.pipeline.llm_types import Passage  # noqa: E402
from backend.pipeline.rerank_local import LocalFusionReranker  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "rerank_corpus.json"
CANDIDATES = 20
CUTOFF = 10


def mrr(ranked: Sequence[str], relevant: dict[str, int]) -> float:
    for rank, passage_id in enumerate(ranked[:CUTOFF], start=1):
        if relevant.get(passage_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg(ranked: Sequence[str], relevant: dict[str, int]) -> float:
    gains = [2 ** relevant.get(passage_id, 0) - 1 for passage_id in ranked[:CUTOFF]]
    ideal = sorted((2**grade - 1 for grade in relevant.values()), reverse=True)[:CUTOFF]
    dcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains))
    return dcg / sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))


def _topic(passage_id: str) -> str:
    return passage_id[0]


def _evaluate(corpus: dict[str, Any], vectors: dict[str, list[float]], rounds: int) -> dict[str, list[float]]:
    embedder, reranker = LocalMiniLMEmbedder(), LocalFusionReranker()
    by_id = {passage["id"]: passage for passage in corpus["passages"]}
    stats: dict[str, list[float]] = {key: [] for key in ("dense_mrr", "dense_ndcg", "ours_mrr", "ours_ndcg",
                                                         "text_mrr", "text_ndcg", "ms", "answer", "unrelated",
                                                         "holdout_dense_mrr", "holdout_ours_mrr")}
    for query in corpus["queries"]:
        relevant: dict[str, int] = query["relevant"]
        query_vector = embedder.embed_query(query["query"])
        dense = sorted(by_id, key=lambda pid: -sum(a * b for a, b in zip(vectors[pid], query_vector, strict=True)))
        ids = dense[:CANDIDATES]
        passages = [Passage(text=by_id[pid]["text"], title=by_id[pid]["title"], vector=tuple(vectors[pid]))
                    for pid in ids]
        timings = []
        for _ in range(rounds):
            start = time.perf_counter()
            results = reranker.rerank(query["query"], passages, query_vector=query_vector)
            timings.append((time.perf_counter() - start) * 1000)
        text_only = reranker.rerank(query["query"], [Passage(text=p.text, title=p.title) for p in passages])
        ours, text_ranked = [ids[r.index] for r in results], [ids[r.index] for r in text_only]
        topics = {_topic(pid) for pid in relevant}
        for result in results:
            grade, topic = relevant.get(ids[result.index], 0), _topic(ids[result.index])
            if grade == 2:
                stats["answer"].append(result.score)
            elif topic not in topics:
                stats["unrelated"].append(result.score)
        for name, ranked in (("dense", ids), ("ours", ours), ("text", text_ranked)):
            stats[f"{name}_mrr"].append(mrr(ranked, relevant))
            stats[f"{name}_ndcg"].append(ndcg(ranked, relevant))
            if query.get("holdout") and name != "text":
                stats[f"holdout_{name}_mrr"].append(mrr(ranked, relevant))
        stats["ms"].append(statistics.median(timings))
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 timing rounds per query instead of 30")
    rounds = 3 if parser.parse_args().quick else 30
    corpus = json.loads(CORPUS.read_text())
    start = time.perf_counter()
    embedded = LocalMiniLMEmbedder().embed_documents([passage["text"] for passage in corpus["passages"]])
    vectors = {passage["id"]: vector for passage, vector in zip(corpus["passages"], embedded, strict=True)}
    setup_s = time.perf_counter() - start
    stats = _evaluate(corpus, vectors, rounds)
    mean = {key: statistics.fmean(values) for key, values in stats.items()}
    answers, unrelated = stats["answer"], stats["unrelated"]
    latencies = sorted(stats["ms"])
    print(f"passages={len(corpus['passages'])} queries={len(corpus['queries'])} candidates={CANDIDATES} "
          f"setup_embed_s={setup_s:.1f}")
    print(f"dense:      mrr@10={mean['dense_mrr']:.3f} ndcg@10={mean['dense_ndcg']:.3f}")
    print(f"fusion:     mrr@10={mean['ours_mrr']:.3f} ndcg@10={mean['ours_ndcg']:.3f}")
    print(f"text-only:  mrr@10={mean['text_mrr']:.3f} ndcg@10={mean['text_ndcg']:.3f} (fusion without vectors)")
    print(f"held-out ({len(stats['holdout_ours_mrr'])} queries): fusion mrr@10={mean['holdout_ours_mrr']:.3f} "
          f"dense mrr@10={mean['holdout_dense_mrr']:.3f}")
    print(f"latency_ms per query (20 candidates): median={statistics.median(latencies):.2f} "
          f"max={latencies[-1]:.2f}")
    print(f"scores: answering median={statistics.median(answers):.2f} min={min(answers):.2f} "
          f"share>0.6={sum(s > 0.6 for s in answers) / len(answers):.2f}; other-topic "
          f"median={statistics.median(unrelated):.2f} max={max(unrelated):.2f} "
          f"share<0.3={sum(s < 0.3 for s in unrelated) / len(unrelated):.2f}")
    print(f"rerank_mrr={mean['ours_mrr']:.3f} dense_mrr={mean['dense_mrr']:.3f} target=>1.0 "
          f"ratio={mean['ours_mrr'] / mean['dense_mrr']:.3f}")


if __name__ == "__main__":
    main()
