"""Local embedder throughput: the adapter's texts/second against the raw ONNX model in the same run.

Raw = the same tokenizer and onnxruntime session called directly on the same batches (tokenise, run,
mean-pool); the adapter adds batching by length, normalisation and conversion to Python lists.
Target: the adapter keeps at least 90 % of the raw throughput (ratio >= 0.9).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.adapters.embeddings import local_minilm  # noqa: E402
from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder  # noqa: E402

WORDS = (
    "task worker queue broker retry result backend schedule beat routing message acknowledgement "
    "timeout concurrency prefork thread memory limit signal chord group chain canvas serializer json "
    "redis rabbitmq configuration option default value example command line interface monitoring event"
).split()


def _texts(count: int, words_per_text: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words_per_text)) + "." for _ in range(count)]


def _raw_rate(embedder: LocalMiniLMEmbedder, texts: list[str], batch: int) -> float:
    runtime = local_minilm._get_runtime(embedder._spec)
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        encodings = runtime.tokenizer.encode_batch(texts[i : i + batch])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in runtime.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = runtime.session.run([runtime.output_name], feeds)
        weights = mask[:, :, None].astype(np.float32)
        (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    return len(texts) / (time.perf_counter() - start)


def _adapter_rate(embedder: LocalMiniLMEmbedder, texts: list[str]) -> float:
    start = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer texts and rounds (< 60 s)")
    quick = parser.parse_args().quick
    count, rounds = (48, 3) if quick else (160, 5)
    embedder = LocalMiniLMEmbedder()
    load_start = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - load_start
    texts = _texts(count, words_per_text=200)  # ~256 word pieces each: the model's full window
    embedder.embed_documents(texts[:8])  # warm up
    raw, ours = [], []
    for _ in range(rounds):  # alternate, so machine noise hits both alike
        raw.append(_raw_rate(embedder, texts, embedder.batch_size))
        ours.append(_adapter_rate(embedder, texts))
    raw_rate, our_rate = float(np.median(raw)), float(np.median(ours))
    query_start = time.perf_counter()
    for text in texts[:20]:
        embedder.embed_query(text[:80])
    query_ms = (time.perf_counter() - query_start) / 20 * 1000
    print(f"load_s={load_s:.2f} query_ms={query_ms:.1f} batch={embedder.batch_size} texts={count} rounds={rounds}")
    print(f"embed_texts_per_s={our_rate:.1f} raw_texts_per_s={raw_rate:.1f} target=0.9 ratio={our_rate / raw_rate:.3f}")


if __name__ == "__main__":
    main()
