"""Retrieval services: embed query, hybrid search, rerank, assemble context (no models)."""
