"""Embedder for OpenAI and OpenAI-compatible embedding endpoints via the openai SDK, batched and unit-normalised."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence

from openai.types import CreateEmbeddingResponse

from backend.adapters.llm.openai_common import (
    Endpoint,
    UnusableResponseError,
    call_with_retries,
    make_client,
    resolve_base_url,
)
from backend.adapters.retry import RetryPolicy
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.llm_types import Flow

logger = logging.getLogger(__name__)

# OpenAI rejects "" as an input; a lone space embeds as "no content", which is what an empty text means.
_EMPTY_TEXT_STAND_IN = " "


class OpenAIEmbedder:
    """Embeds in batches of `batch_size`; vectors come back in input order, unit length, as Python floats.

    `dimensions=` is sent only to models that can shorten their vectors (text-embedding-3-*), unless
    `send_dimensions` says otherwise; other models must natively produce `dimension`-long vectors.
    """

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "text-embedding-3-small",
        dimension: int = 1536,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        batch_size: int = 64,
        max_input_tokens: int = 8191,
        send_dimensions: bool | None = None,
    ) -> None:
        if dimension < 1 or batch_size < 1 or max_input_tokens < 1:
            raise ValueError("dimension, batch_size and max_input_tokens must be at least 1")
        self._endpoint = Endpoint(base_url=resolve_base_url(base_url), model=model)
        self._policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base)
        self._client = make_client(api_key=api_key, endpoint=self._endpoint, timeout=timeout)
        self._dimension = dimension
        self._batch_size = batch_size
        self._max_input_tokens = max_input_tokens
        self._send_dimensions = "text-embedding-3" in model if send_dimensions is None else send_dimensions

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
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed_batch([text])[0]

    def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        inputs = [text or _EMPTY_TEXT_STAND_IN for text in texts]
        started = time.monotonic()
        response = call_with_retries(
            lambda: self._request(inputs), policy=self._policy, endpoint=self._endpoint, what="embedding"
        )
        vectors = [self._unit_vector(item.embedding) for item in sorted(response.data, key=lambda item: item.index)]
        logger.debug(
            "openai embed flow=%s model=%s texts=%d prompt_tokens=%d latency_ms=%d", Flow.EMBED.value,
            self._endpoint.model, len(inputs), response.usage.prompt_tokens if response.usage else 0,
            (time.monotonic() - started) * 1000,
        )
        return vectors

    def _request(self, inputs: list[str]) -> CreateEmbeddingResponse:
        # encoding_format is left to the SDK: it asks for base64 and decodes it, and accepts float lists
        # from compatible servers that ignore the parameter.
        model = self._endpoint.model
        try:
            if self._send_dimensions:
                response = self._client.embeddings.create(input=inputs, model=model, dimensions=self._dimension)
            else:
                response = self._client.embeddings.create(input=inputs, model=model)
        except ValueError as exc:  # the SDK's base64 post-parser raises this for a reply without data
            raise UnusableResponseError(str(exc)) from exc
        if len(response.data) != len(inputs):
            raise UnusableResponseError(f"{len(response.data)} vectors for {len(inputs)} texts")
        return response

    def _unit_vector(self, raw: Sequence[float]) -> list[float]:
        if len(raw) != self._dimension:
            raise PermanentServiceError(
                f"Embedding model '{self._endpoint.model}' at {self._endpoint.base_url} returned {len(raw)}-d "
                f"vectors but the embedder is configured for {self._dimension}; set the dimension to {len(raw)}."
            )
        norm = math.sqrt(math.fsum(float(value) * float(value) for value in raw))
        if norm == 0.0:
            raise PermanentServiceError(f"Embedding model '{self._endpoint.model}' returned an all-zero vector")
        return [float(value) / norm for value in raw]
