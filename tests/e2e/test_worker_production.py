"""A real Celery worker on the Redis broker converges collections; a held lock delays, never drops."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.config.celery_app import app as celery_app
from backend.core.locks import cache_lock
from backend.gurus import services
from backend.gurus.models import CollectionStatus, VectorCollection
from tests.factories import GuruFactory

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's Redis"),
]


def _wait_until(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.fixture
def worker(milvus: MilvusVectorStore, settings: SettingsWrapper, tmp_path: Path) -> Iterator[None]:
    """A separate worker process on the same PostgreSQL test DB, Redis broker and Milvus server."""
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="backend.config.settings.base",
        DATABASE_URL=_database_url(),
        OPENGURU_COLLECTION_PREFIX=settings.OPENGURU_COLLECTION_PREFIX,
        OPENGURU_DATA_DIR=str(tmp_path / "worker-data"),
    )
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115
    cmd = [sys.executable, "-m", "celery", "-A", "backend.config.celery_app", "worker", "--pool", "solo",
           "--loglevel", "INFO"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = True
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def _status(guru_id: int) -> tuple[str, str]:
    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    return (record.status, record.name) if record else ("", "")


def test_worker_creates_and_renames_the_collection_and_waits_for_the_lock(
    worker: None, milvus: MilvusVectorStore
) -> None:
    guru = GuruFactory(slug="from-worker")
    name = services.collection_name_for("from-worker")
    _wait_until(lambda: _status(guru.pk) == (CollectionStatus.READY, name), timeout=60, what="collection")
    assert milvus.collection_info(name) is not None

    with cache_lock(services.collection_lock_name(guru.pk)):
        guru.slug = "renamed-by-worker"
        guru.save()
        time.sleep(3)
        # The worker found the lock held and re-queued the rename instead of doing or dropping it.
        assert milvus.collection_info(name) is not None
    renamed = services.collection_name_for("renamed-by-worker")
    _wait_until(lambda: _status(guru.pk) == (CollectionStatus.READY, renamed), timeout=60, what="rename")
    assert milvus.collection_info(name) is None
    assert milvus.collection_info(renamed) is not None
