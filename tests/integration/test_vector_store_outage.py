"""Fault: the Milvus Lite sidecar stops while the app serves, then comes back on the same data dir."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.api.services import api_key_create
from backend.core.sidecars import Sidecar, free_port, start_milvus_lite
from backend.gurus.models import CollectionStatus, Guru, VectorCollection
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MANUAL = [["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
           "The countdown argument sets how many seconds to wait before the retry."]]
BROKERS = [["Choosing a broker", "RabbitMQ and Redis are the supported brokers for production use.",
            "The broker URL is configured with the broker_url setting."]]


class MilvusLite:
    """A sidecar that can be stopped and started again on the same port and data dir."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.sidecar: Sidecar | None = None

    def start(self) -> str:
        self.sidecar = start_milvus_lite(data_dir=self.root / "milvus.db", port=self.port, log_dir=self.root)
        return self.sidecar.url

    def stop(self) -> None:
        if self.sidecar is not None:
            self.sidecar.stop()
            self.sidecar = None


@pytest.fixture
def milvus_lite(tmp_path: Path, settings: SettingsWrapper) -> Iterator[MilvusLite]:
    server = MilvusLite(tmp_path)
    url = server.start()
    # A short call timeout keeps the outage's failing calls quick; the default is 10 s.
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": url, "TOKEN": "", "TIMEOUT": "3"}
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    try:
        yield server
    finally:
        server.stop()


def _eventually(check: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _source(guru: Guru, title: str, pages: list[list[str]]) -> DataSource:
    upload = SimpleUploadedFile(f"{title}.pdf", pdf_bytes(pages), content_type="application/pdf")
    return source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title=title)


def _status(source: DataSource) -> str:
    return str(DataSource.objects.values_list("status", flat=True).get(pk=source.pk))


def test_a_stopped_vector_store_is_a_clear_503_and_everything_recovers_when_it_returns(
    milvus_lite: MilvusLite, live_celery_worker: None
) -> None:
    maintainer = UserFactory(username="keeper")
    guru = GuruFactory(slug="outage", name="Celery Guru", domain_knowledge="the Celery task queue")
    guru.maintainers.add(maintainer)
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=api_key_create(user=maintainer, name="t", guru=None, rate_limit_per_minute=1000).raw)
    _eventually(lambda: VectorCollection.objects.filter(guru_id=guru.pk, status=CollectionStatus.READY).exists(),
                "the collection")
    manual = _source(guru, "manual", MANUAL)
    _eventually(lambda: _status(manual) == SourceStatus.INDEXED, "the manual's index")
    assert api.post("/api/v1/outage/answer/", {"question": "how do I retry a task"}, format="json").status_code == 200

    milvus_lite.stop()
    started = time.monotonic()
    down = api.post("/api/v1/outage/answer/", {"question": "how long is the retry countdown"}, format="json")
    assert down.status_code == 503, down.content
    assert down.json()["code"] == "vector_store_unavailable", down.json()
    assert "MilvusException" not in down.content.decode()  # the vendor's text stays in the logs
    assert time.monotonic() - started < 10  # a clear error, not a hang
    brokers = _source(guru, "brokers", BROKERS)
    _eventually(lambda: DataSource.objects.get(pk=brokers.pk).error_message.startswith("Retrying"),
                "the index run to fail and be retried")
    assert _status(brokers) != SourceStatus.FAILED

    milvus_lite.start()  # same port and data dir; nobody touches the app
    _eventually(lambda: _status(brokers) == SourceStatus.INDEXED, "the retried index run")
    back = api.post("/api/v1/outage/answer/", {"question": "which brokers are supported"}, format="json")
    assert back.status_code == 200, back.content
    assert "Redis" in back.json()["content"]
