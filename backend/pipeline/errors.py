"""Errors that adapters raise instead of leaking vendor exceptions."""


class ServiceError(Exception):
    """Base for failures of an external service an adapter talks to."""


class TransientServiceError(ServiceError):
    """The call may succeed if retried later (timeouts, 429, 5xx, service starting)."""


class VectorStoreError(TransientServiceError):
    """The vector store is unreachable or failed a call; retried later, shown as `vector_store_unavailable`."""


class PermanentServiceError(ServiceError):
    """Retrying will not help; the message is shown to a maintainer."""


class DimensionMismatchError(PermanentServiceError):
    """A vector collection was built for another embedding dimension than the configured embedder."""

    def __init__(self, *, collection: str, collection_dim: int, embedder_dim: int) -> None:
        self.collection = collection
        self.collection_dim = collection_dim
        self.embedder_dim = embedder_dim
        super().__init__(
            f"Collection '{collection}' stores {collection_dim}-d vectors but the configured embedder "
            f"produces {embedder_dim}-d vectors. Re-embed the guru (or switch back to the previous "
            "embedder); OpenGuru will not write mismatched vectors."
        )
