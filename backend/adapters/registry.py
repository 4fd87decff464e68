"""Builds adapter instances from settings; the one place implementations are chosen.

Instances are cached per configuration and rebuilt when a test overrides the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from backend.pipeline.ports import Embedder, VectorStore


def _milvus_store(config: dict[str, str]) -> VectorStore:
    from backend.adapters.vector_store.milvus import MilvusVectorStore

    if not config.get("URI"):
        raise ImproperlyConfigured("OPENGURU_VECTOR_STORE['URI'] (env MILVUS_URI) is empty.")
    return MilvusVectorStore(uri=config["URI"], token=config.get("TOKEN", ""))


def _memory_store(config: dict[str, str]) -> VectorStore:
    from backend.adapters.vector_store.fake import InMemoryVectorStore

    return InMemoryVectorStore(namespace=config.get("URI") or "default")


def _local_minilm(config: dict[str, str]) -> Embedder:
    from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder

    return LocalMiniLMEmbedder()


def _hashing(config: dict[str, str]) -> Embedder:
    from backend.adapters.embeddings.fake import HashingEmbedder

    return HashingEmbedder(dimension=int(config.get("DIMENSION", 384)))


VECTOR_STORES: dict[str, Callable[[dict[str, str]], VectorStore]] = {
    "milvus": _milvus_store,
    "memory": _memory_store,
}
EMBEDDERS: dict[str, Callable[[dict[str, str]], Embedder]] = {
    "local-minilm": _local_minilm,
    "hashing": _hashing,
}


def _build(kind: str, table: dict[str, Callable[[dict[str, str]], Any]], config: dict[str, str]) -> Any:
    backend = config.get("BACKEND", "")
    factory = table.get(backend)
    if factory is None:
        raise ImproperlyConfigured(f"Unknown {kind} backend {backend!r}; choose one of {sorted(table)}.")
    return factory(config)


@cache
def _vector_store(frozen: tuple[tuple[str, str], ...]) -> VectorStore:
    return _build("vector store", VECTOR_STORES, dict(frozen))  # type: ignore[no-any-return]


@cache
def _embedder(frozen: tuple[tuple[str, str], ...]) -> Embedder:
    return _build("embedder", EMBEDDERS, dict(frozen))  # type: ignore[no-any-return]


def vector_store() -> VectorStore:
    """The configured vector store (settings.OPENGURU_VECTOR_STORE)."""
    return _vector_store(tuple(sorted(settings.OPENGURU_VECTOR_STORE.items())))


def embedder() -> Embedder:
    """The configured embedder (settings.OPENGURU_EMBEDDER)."""
    return _embedder(tuple(sorted(settings.OPENGURU_EMBEDDER.items())))


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting in {"OPENGURU_VECTOR_STORE", "OPENGURU_EMBEDDER"}:
        _vector_store.cache_clear()
        _embedder.cache_clear()
