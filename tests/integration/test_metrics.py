"""/metrics through Django's test client: who may scrape, and that each number moves by what happened."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.api.services import api_key_create
from backend.config.celery_app import app as celery_app
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes
from tests.support.metrics import Samples, parse

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it."]]


def scrape(client: Client, **extra: Any) -> Samples:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain") and response["Cache-Control"] == "no-store"
    return parse(response.content.decode())


@pytest.fixture
def guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # its (in-memory) collection
        made: Guru = GuruFactory(slug="metrics-guru", name="Metrics Guru")
    return made


def test_only_allowed_addresses_or_the_token_may_scrape(client: Client, settings: SettingsWrapper) -> None:
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1, allowed by default
    refused = client.get("/metrics", REMOTE_ADDR="203.0.113.7")
    assert refused.status_code == 403 and b"openguru_" not in refused.content
    settings.OPENGURU_METRICS_TOKEN = "scrape-" + uuid.uuid4().hex
    asked = client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer wrong")
    assert asked.status_code == 401 and asked["WWW-Authenticate"].startswith("Bearer")
    allowed = client.get("/metrics", REMOTE_ADDR="203.0.113.7",
                         HTTP_AUTHORIZATION=f"Bearer {settings.OPENGURU_METRICS_TOKEN}")
    assert allowed.status_code == 200 and b"openguru_http_requests_total" in allowed.content
    assert client.post("/metrics").status_code == 405


def test_openmetrics_is_served_to_scrapers_that_ask_for_it(client: Client) -> None:
    response = client.get("/metrics", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0")
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response.content.endswith(b"# EOF\n")


def test_requests_are_counted_by_route_name_not_path(client: Client, guru: Guru) -> None:
    before = scrape(client)
    for _ in range(3):
        assert client.get("/g/metrics-guru/").status_code == 200
    assert client.get("/g/no-such-guru/").status_code == 404
    assert client.get("/no/such/page/42").status_code == 404
    after = scrape(client)
    series = [("answering:guru-page", "2xx"), ("answering:guru-page", "4xx"), ("unmatched", "4xx"), ("metrics", "2xx")]
    moved = [after.get("openguru_http_requests_total", method="GET", route=route, status=status)
             - before.get("openguru_http_requests_total", method="GET", route=route, status=status)
             for route, status in series]
    assert moved == [3, 1, 1, 1]  # the first scrape counted itself when it finished
    assert not any(value.startswith(("/g/", "g/", "/no/")) for value in after.label_values())


def test_an_ingestion_moves_the_task_and_source_numbers(client: Client, guru: Guru,
                                                        django_capture_on_commit_callbacks:
                                                        DjangoCaptureOnCommitCallbacks) -> None:
    before = scrape(client)
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):  # the task runs eagerly, in this process
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    after = scrape(client)
    task = {"task": "sources.index", "outcome": "success"}
    assert after.get("openguru_celery_tasks_total", **task) - before.get("openguru_celery_tasks_total", **task) == 1
    assert after.get("openguru_sources", kind="pdf", status="indexed") == \
        before.get("openguru_sources", kind="pdf", status="indexed") + 1
    assert after.get("openguru_scrape_part_up", part="store") == 1 == after.get("openguru_scrape_part_up",
                                                                                  part="sources")


def test_answers_are_counted_by_state_and_channel(client: Client, guru: Guru,
                                                  django_capture_on_commit_callbacks:
                                                  DjangoCaptureOnCommitCallbacks) -> None:
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    user = UserFactory(username="metrics-maintainer")
    guru.maintainers.add(user)
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="m", guru=guru).raw)
    before = scrape(client)
    for question in ("How do I retry a task?", "And how do I retry it again later?"):
        response = api.post("/api/v1/metrics-guru/answer/", {"question": question}, format="json")
        assert response.status_code == 200, response.content[:300]
    after = scrape(client)
    complete = {"state": "complete", "channel": "api"}
    assert after.get("openguru_answers_total", **complete) - before.get("openguru_answers_total", **complete) == 2
    assert after.get("openguru_answer_streams_in_flight") == 0  # every stream that opened has closed


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")  # send_task publishes: what we want
def test_queue_depth_counts_waiting_and_claimed_messages(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    queue = f"metrics-probe-{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)  # a queue of its own: nothing else uses it
    assert scrape(client).get("openguru_queue_messages", queue=queue) == 0
    with celery_app.connection_for_write() as conn:
        for _ in range(2):
            celery_app.send_task("openguru.metrics-probe", queue=queue, connection=conn)
        assert scrape(client).get("openguru_queue_messages", queue=queue) == 2
        unacked_before = scrape(client).get("openguru_queue_unacked_messages")
        channel = conn.channel()
        try:
            taken = channel.basic_get(queue, no_ack=False)  # a consumer claims one and has not acked it yet
            assert taken is not None
            after_claim = scrape(client)
            assert after_claim.get("openguru_queue_messages", queue=queue) == 1
            assert after_claim.get("openguru_queue_unacked_messages") == unacked_before + 1
            taken.ack()
            assert scrape(client).get("openguru_queue_unacked_messages") == unacked_before
        finally:
            channel.queue_purge(queue)
            channel.close()
