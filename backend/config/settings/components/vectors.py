"""Vector store and embedder selection; adapters/registry.py builds them from these values."""

from pathlib import Path

from backend.config.env import env_int, env_path, env_str

_DATA_DIR = env_path("OPENGURU_DATA_DIR", Path(__file__).resolve().parents[4] / "var")

# Milvus collection names are `<prefix><slug with - as _>`; a prefix lets installs share a server.
OPENGURU_COLLECTION_PREFIX = env_str("OPENGURU_COLLECTION_PREFIX", "guru_")
# A filesystem path opens Milvus Lite in-process (one process per data dir); an http(s) URI talks
# to a Milvus server or to the `milvus-lite server` sidecar that `./openguru start` runs.
OPENGURU_VECTOR_STORE = {
    "BACKEND": env_str("OPENGURU_VECTOR_STORE", "milvus"),
    "URI": env_str("MILVUS_URI", str(_DATA_DIR / "milvus.db")),
    "TOKEN": env_str("MILVUS_TOKEN"),
    # The store's first use in a process loads this install's released collections (Milvus Lite
    # forgets the load state when it restarts); other installs' collections are left alone.
    "LOAD_PREFIX": OPENGURU_COLLECTION_PREFIX,
    # Seconds a call may take before it fails with vector_store_unavailable (loading a collection: >= 120).
    "TIMEOUT": str(env_int("MILVUS_TIMEOUT", 10)),  # a string like the other values: one dict type
}
