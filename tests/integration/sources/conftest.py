"""Fixtures for ingestion tests: a ready guru on real Milvus, and eager tasks run on commit."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus.models import Guru, VectorCollection
from tests.factories import GuruFactory


@pytest.fixture
def guru(
    milvus: MilvusVectorStore,
    settings: SettingsWrapper,
    tmp_path: Path,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> Guru:
    settings.OPENGURU_REPOS_DIR = str(tmp_path / "repos")
    with django_capture_on_commit_callbacks(execute=True):
        created: Guru = GuruFactory(slug="ingest")
    return created


@pytest.fixture
def collection(guru: Guru) -> str:
    return VectorCollection.objects.get(guru_id=guru.pk).name
