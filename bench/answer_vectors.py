"""Real embeddings for bench/answer.py's corpus, cached on disk row by row, or pooled per topic when cold."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.answer_corpus import CorpusChunk, text_key

CACHE_BATCH = 256


def cached_vectors(texts: list[str], embed: Callable[[list[str]], list[list[float]]], cache: Path, *,
                   dimension: int, capacity: int, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Vectors of `texts` from the real embedder, kept on disk row by row (each row keyed by its text's hash).

    Rows already embedded for the same text are reused, so a second run (or the 10k prefix of the 100k
    corpus) costs no embedding; a missing or changed row is embedded and written. Interrupted runs resume.
    """
    cache.mkdir(parents=True, exist_ok=True)
    vectors_path, keys_path = cache / f"vectors-{dimension}.npy", cache / f"keys-{dimension}.npy"
    if not vectors_path.exists() or np.load(keys_path, mmap_mode="r").shape[0] < capacity:
        np.lib.format.open_memmap(vectors_path, mode="w+", dtype=np.float32, shape=(capacity, dimension)).flush()
        np.lib.format.open_memmap(keys_path, mode="w+", dtype=np.uint8, shape=(capacity, 8)).flush()
    vectors = np.load(vectors_path, mmap_mode="r+")
    keys = np.load(keys_path, mmap_mode="r+")
    wanted = [text_key(text) for text in texts]
    missing = [i for i, key in enumerate(wanted) if bytes(keys[i]) != key]
    for start in range(0, len(missing), CACHE_BATCH):
        rows = missing[start:start + CACHE_BATCH]
        vectors[rows] = np.asarray(embed([texts[i] for i in rows]), dtype=np.float32)
        keys[rows] = np.frombuffer(b"".join(wanted[i] for i in rows), dtype=np.uint8).reshape(len(rows), 8)
        vectors.flush()
        keys.flush()
        if progress is not None:
            progress(start + len(rows), len(missing))
    return np.asarray(vectors[: len(texts)])


def cache_hits(texts: list[str], cache: Path, *, dimension: int) -> int:
    """How many of `texts` already have their vector in the cache (nothing is embedded)."""
    keys_path = cache / f"keys-{dimension}.npy"
    if not keys_path.exists():
        return 0
    keys = np.load(keys_path, mmap_mode="r")
    count = min(len(texts), keys.shape[0])
    stored = np.asarray(keys[:count]).tobytes()
    return sum(stored[i * 8:(i + 1) * 8] == text_key(texts[i]) for i in range(count))


def pooled_vectors(chunks: list[CorpusChunk], embed: Callable[[list[str]], list[list[float]]]) -> np.ndarray:
    """One real vector per (product, topic) — that of its first chunk — for every chunk of the pair."""
    pair = [chunk.doc_key.split("/")[3:5] for chunk in chunks]
    firsts: dict[str, int] = {}
    for i, (product, topic) in enumerate(pair):
        firsts.setdefault(f"{product}/{topic}", i)
    vectors = np.asarray(embed([chunks[i].text for i in firsts.values()]), dtype=np.float32)
    row = {key: n for n, key in enumerate(firsts)}
    return vectors[[row[f"{product}/{topic}"] for product, topic in pair]]
