"""Evaluation tests index real pages into real Milvus, like the ingestion tests (their fixtures, reused)."""

from tests.integration.sources.conftest import collection, guru  # noqa: F401
