"""Embedder for Google's Gemini embedding models (gemini-embedding-001) via the google-genai SDK."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence

from google.genai import types

from backend.adapters.llm.gemini_common import GeminiClient, call_with_retries
from backend.adapters.retry import RetryPolicy
from backend.pipeline.errors import PermanentServiceError, TransientServiceError

logger = logging.getLogger(__name__)

# Gemini's batchEmbedContents accepts at most this many texts per call.
MAX_BATCH_SIZE = 100
_DOCUMENT = "RETRIEVAL_DOCUMENT"
_QUERY = "RETRIEVAL_QUERY"


class GeminiEmbedder:
    """Documents are embedded with task type RETRIEVAL_DOCUMENT, queries with RETRIEVAL_QUERY.

    Gemini only returns unit vectors at its full 3072 dimensions, so every vector is normalised here.
    The API rejects an empty text, so "" is never sent: it gets a fixed unit vector instead.
    """

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "gemini-embedding-001",
        dimension: int = 768,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        batch_size: int = MAX_BATCH_SIZE,
        max_input_tokens: int = 2048,
    ) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be at least 1, got {dimension}")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE}, got {batch_size}")
        if max_input_tokens < 1:
            raise ValueError(f"max_input_tokens must be at least 1, got {max_input_tokens}")
        self._model = model.removeprefix("models/")
        self._dimension = dimension
        self._batch_size = batch_size
        self._max_input_tokens = max_input_tokens
        self._client = GeminiClient(api_key=api_key, base_url=base_url, timeout=timeout)
        self._policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max)

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_input_tokens(self) -> int:
        return self._max_input_tokens

    def count_tokens(self, text: str) -> int:
        # No tokenizer for this remote model here: three characters per token over-counts English and
        # code, so chunks sized with it stay inside the model's window.
        return -(-len(text) // 3)

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed(texts[start : start + self._batch_size], _DOCUMENT))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], _QUERY)[0]

    def _embed(self, texts: list[str], task_type: str) -> list[list[float]]:
        """One vector per text, in order; only non-empty texts are sent."""
        sendable = [text for text in texts if text]
        sent = iter(self._request(sendable, task_type) if sendable else [])
        return [next(sent) if text else self._empty_text_vector() for text in texts]

    def _request(self, texts: list[str], task_type: str) -> list[list[float]]:
        config = types.EmbedContentConfig(task_type=task_type, output_dimensionality=self._dimension)

        def attempt() -> list[list[float]]:
            response = self._client.get().models.embed_content(model=self._model, contents=texts, config=config)
            return self._unit_vectors(response, expected=len(texts))

        started = time.monotonic()
        vectors = call_with_retries(attempt, policy=self._policy, model=self._model, what=f"embedding ({task_type})")
        logger.debug("gemini embed model=%s task_type=%s texts=%d latency_ms=%d", self._model, task_type, len(texts),
                     (time.monotonic() - started) * 1000)
        return vectors

    def _unit_vectors(self, response: types.EmbedContentResponse, *, expected: int) -> list[list[float]]:
        embeddings = response.embeddings or []
        if len(embeddings) != expected:
            raise TransientServiceError(f"Gemini returned {len(embeddings)} embeddings for {expected} texts")
        vectors: list[list[float]] = []
        for embedding in embeddings:
            values = embedding.values or []
            if len(values) != self._dimension:
                raise PermanentServiceError(
                    f"Gemini model '{self._model}' returned {len(values)}-d vectors but {self._dimension} were "
                    "requested; choose a dimension the model supports (gemini-embedding-001: 128 to 3072)."
                )
            norm = math.sqrt(sum(value * value for value in values))
            if norm == 0.0:
                raise TransientServiceError(f"Gemini model '{self._model}' returned a zero vector")
            vectors.append([float(value) / norm for value in values])
        return vectors

    def _empty_text_vector(self) -> list[float]:
        return [1.0] + [0.0] * (self._dimension - 1)
