"""Deterministic, model-free embedder for tests: feature hashing of words and character trigrams."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

_WORD_PATTERN = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
_EMPTY_FEATURE = "\x00empty"


class HashingEmbedder:
    """Hashes lowercase words (and their character trigrams) into signed buckets, then L2-normalises.

    Texts that share words get a higher cosine similarity; stable across processes and platforms.
    Only the first `max_input_tokens` words are read, mimicking a model's truncation.
    """

    def __init__(self, dimension: int = 384, *, max_input_tokens: int = 256) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be at least 1, got {dimension}")
        if max_input_tokens < 1:
            raise ValueError(f"max_input_tokens must be at least 1, got {max_input_tokens}")
        self._dimension = dimension
        self._max_input_tokens = max_input_tokens

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_input_tokens(self) -> int:
        return self._max_input_tokens

    def count_tokens(self, text: str) -> int:
        """Words, as this fake reads them."""
        return len(_WORD_PATTERN.findall(text))

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * self._dimension
        for feature, weight in _features(text, self._max_input_tokens):
            bucket, sign = _hash_feature(feature, self._dimension)
            vector[bucket] += sign * weight
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:
            bucket, sign = _hash_feature(_EMPTY_FEATURE, self._dimension)
            vector[bucket] = sign
            return vector
        return [value / norm for value in vector]


def _features(text: str, max_words: int) -> list[tuple[str, float]]:
    words = _WORD_PATTERN.findall(text.lower())[:max_words]
    if not words:
        return [(_EMPTY_FEATURE, _WORD_WEIGHT)]
    features: list[tuple[str, float]] = []
    for word in words:
        features.append((f"w:{word}", _WORD_WEIGHT))
        padded = f"#{word}#"
        features.extend((f"t:{padded[i : i + 3]}", _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features


@lru_cache(maxsize=65536)
def _hash_feature(feature: str, dimension: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return (digest >> 1) % dimension, 1.0 if digest & 1 else -1.0
