"""The production topology end to end, through nginx only: compose's processes, the README's journey, the guru
page's SSE answer, the widget on another origin, the REST API with a key, and what the app leaves on local disk."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import ANSWER, FIRST_PAGE, SLUG, WIDGET_ORIGIN, Deployment, answer_text, ask_on_page, visitor
from tests.fakes.pdfs import pdf_bytes
from tests.support.product import eventually, sse_events
from tests.support.topology import Topology, compose_default

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's data stores"),
]

# What a deployment may keep on the app containers' disk (compose's app_data volume): uploads, the static
# files nginx serves (rebuilt by collectstatic), beat's last-run times (beat is a single process) and the
# clone cache of GitHub sources (re-cloned when missing; none is indexed here).
ALLOWED_ON_DISK = re.compile(r"media|static|repos|celerybeat-schedule(\.(bak|dat|dir|db))?")


def test_the_topology_runs_the_processes_compose_runs(topology: Topology) -> None:
    assert len(topology.web_worker_pids()) == int(compose_default("OPENGURU_WEB_WORKERS"))
    assert sorted(topology.processes) == ["beat", "discord", "nginx", "slack", "web", "worker1", "worker2"]
    assert all(process.popen.poll() is None for process in topology.processes.values())
    response = httpx.get(f"{topology.nginx_url}/healthz")
    assert response.json() == {"status": "ok", "database": "ok", "vector_store": "ok"}
    assert response.headers["server"] == "nginx"  # server_tokens off: no version
    assert "/healthz" not in topology.log_text("nginx-access")  # access_log off for health checks


def test_a_worker_process_indexed_the_website(deployment: Deployment) -> None:
    topology = deployment.topology
    assert FIRST_PAGE in deployment.fakes.site.paths()
    worker_logs = topology.log_text("worker1") + topology.log_text("worker2")
    assert re.search(r"Task sources\.index\[[0-9a-f-]+\] succeeded", worker_logs), worker_logs[-3000:]
    assert "sources.index" not in topology.log_text("web")


def test_a_worker_process_summarised_the_website_and_the_api_serves_it(deployment: Deployment) -> None:
    with deployment.api() as api:
        path = f"/api/v1/{SLUG}/data-sources/{deployment.source_id}/summary/"
        eventually(lambda: api.get(path).json()["state"] == "DONE", "the source's summary")
        source, guru = api.get(path).json(), api.get(f"/api/v1/{SLUG}/summary/").json()
    # Written by the fake LLM (by request shape), stored in PostgreSQL, read back through nginx.
    assert source["summary"]["text"] == "Installing widgets" and not source["summary"]["extractive"], source
    assert guru["summary"] is not None and guru["spend"]["used"] > 0, guru
    worker_logs = deployment.topology.log_text("worker1") + deployment.topology.log_text("worker2")
    assert re.search(r"Task sources\.summarize\[[0-9a-f-]+\] succeeded", worker_logs), worker_logs[-3000:]


def test_a_visitor_asks_on_the_guru_page_and_the_answer_streams_over_sse(deployment: Deployment) -> None:
    with visitor(deployment.topology.nginx_url) as client:
        response, events = ask_on_page(client, "How do I install widgets?")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert answer_text(events) == ANSWER
    references = next(data for name, data in events if name == "references")
    assert FIRST_PAGE in str(references)


def test_the_widget_answers_on_an_allowed_origin_only(deployment: Deployment) -> None:
    with visitor(deployment.topology.nginx_url) as client:
        script = client.get("/widget.js")
        preflight = client.options("/widget/stream/", headers={
            "Origin": WIDGET_ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        asked = client.post("/widget/stream/", json={"question": "How do I configure the widgets client?"},
                            headers={"Origin": WIDGET_ORIGIN, "Authorization": f"Widget {deployment.widget_key}"})
        refused = client.post("/widget/stream/", json={"question": "Anything?"},
                              headers={"Origin": "https://elsewhere.example", "Authorization": deployment.widget_key})
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert script.headers["cache-control"] == "public, max-age=300"
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == WIDGET_ORIGIN
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    assert asked.status_code == 200, asked.text
    assert asked.headers["access-control-allow-origin"] == WIDGET_ORIGIN
    assert answer_text(sse_events(asked.content)) == ANSWER
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers


def test_the_rest_api_answers_and_takes_an_upload_with_a_key(deployment: Deployment) -> None:
    with deployment.api() as api:
        answered = api.post(f"/api/v1/{SLUG}/answer/", json={"question": "Which Python do widgets need?"})
        listed = api.get("/api/v1/gurus/")
        upload = {"pdf_files": ("manual.pdf", pdf_bytes([["Widgets retry three times on 503."]]), "application/pdf")}
        uploaded = api.post(f"/api/v1/{SLUG}/data-sources/", files=upload)
        assert uploaded.status_code == 200, uploaded.text
        source = uploaded.json()["created"][0]["id"]
        eventually(lambda: api.get(f"/api/v1/{SLUG}/data-sources/{source}/").json()["status"] == "INDEXED", "PDF")
    anonymous = httpx.get(f"{deployment.topology.nginx_url}/api/v1/gurus/")
    assert answered.status_code == 200, answered.text
    assert answered.json()["content"] == ANSWER
    assert [guru["slug"] for guru in listed.json()["results"]] == [SLUG]
    assert anonymous.status_code == 401


def test_the_app_keeps_only_media_static_files_and_the_beat_schedule_on_local_disk(deployment: Deployment) -> None:
    # Its own upload: the other tests of this deployment may run in another test process, with a deployment of its own.
    with deployment.api() as api:
        upload = {"pdf_files": ("kept.pdf", pdf_bytes([["Widgets are kept on disk."]]), "application/pdf")}
        uploaded = api.post(f"/api/v1/{SLUG}/data-sources/", files=upload)
        assert uploaded.status_code == 200, uploaded.text
        source = uploaded.json()["created"][0]["id"]
        eventually(lambda: api.get(f"/api/v1/{SLUG}/data-sources/{source}/").json()["status"] == "INDEXED", "PDF")
    data_dir = deployment.topology.data_dir
    on_disk = sorted(path.name for path in data_dir.iterdir())
    assert [name for name in on_disk if not ALLOWED_ON_DISK.fullmatch(name)] == [], on_disk
    uploads = [path.relative_to(data_dir).as_posix() for path in (data_dir / "media").rglob("*") if path.is_file()]
    assert any(re.fullmatch(r"media/sources/\d+/kept\.pdf", name) for name in uploads), uploads
    assert all(re.fullmatch(r"media/sources/\d+/[\w.-]+\.pdf", name) for name in uploads), uploads
    assert (data_dir / "static" / "admin").is_dir()
    assert not list(Path(data_dir).rglob("*.sqlite3")) and not list(Path(data_dir).rglob("milvus.db"))
