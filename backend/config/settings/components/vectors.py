"""Vector store and embedder selection; adapters/registry.py builds them from these values."""

from pathlib import Path

from backend.config.env import env_path, env_str

_DATA_DIR = env_path("OPENGURU_DATA_DIR", Path(__file__).resolve().parents[4] / "var")

# A filesystem path opens Milvus Lite in-process (one process per data dir); an http(s) URI talks
# to a Milvus server or to the `milvus-lite server` sidecar that `./openguru start` runs.
OPENGURU_VECTOR_STORE = {
    "BACKEND": env_str("OPENGURU_VECTOR_STORE", "milvus"),
    "URI": env_str("MILVUS_URI", str(_DATA_DIR / "milvus.db")),
    "TOKEN": env_str("MILVUS_TOKEN"),
}
# Milvus collection names are `<prefix><slug with - as _>`; a prefix lets installs share a server.
OPENGURU_COLLECTION_PREFIX = env_str("OPENGURU_COLLECTION_PREFIX", "guru_")
