"""What nginx does to the traffic, seen through the running topology: unbuffered SSE, long reads, disconnects
reaching the LLM, gzip for static files only, security headers, the upload cap, and X-Forwarded-For."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import httpx
import psycopg
import pytest
import redis

from backend.adapters.llm.fake import ScriptedReply
from backend.core.counters import RedisCounterStore
from tests.e2e.conftest import SLUG, Deployment, answer_text, ask_on_page, fresh_address, visitor
from tests.support.product import eventually
from tests.support.topology import Topology
from tests.support.topology_nginx import NGINX_CONF

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's data stores"),
]
STREAMING_LOCATIONS = ("/api/", "/widget/", "/g/")  # the guru page's, the widget's and the API's SSE answers
SPOOFED = "203.0.113.9"


def _slow_answer(deployment: Deployment, chunks: int) -> ScriptedReply:
    reply = ScriptedReply(text=" ".join(f"token{i}" for i in range(chunks)), chunks=chunks, chunk_delay=0.1)
    deployment.fakes.script.answer = reply
    return reply


def _ask_stream(client: httpx.Client, question: str) -> httpx.Response:
    client.get(f"/g/{SLUG}/").raise_for_status()
    request = client.build_request("POST", f"/g/{SLUG}/ask/", json={"question": question},
                                   headers={"X-CSRFToken": client.cookies["csrftoken"]})
    return client.send(request, stream=True)


def test_sse_reaches_the_client_token_by_token(deployment: Deployment) -> None:
    reply = _slow_answer(deployment, chunks=12)
    outcomes = deployment.fakes.llm.stream_outcomes
    finished_before = len(outcomes)
    with visitor(deployment.topology.nginx_url) as client:
        response = _ask_stream(client, "Which options does the widgets client take?")
        try:
            lines = response.iter_lines()
            while next(lines) != "event: delta":
                pass
            # The first token is here while the fake LLM is still generating the rest: nothing buffered it.
            streaming_when_first_arrived = len(outcomes) == finished_before
            deltas = 1 + sum(1 for line in lines if line == "event: delta")
        finally:
            response.close()
    assert streaming_when_first_arrived
    assert deltas == len(reply.pieces())
    assert "content-encoding" not in response.headers
    # The fake records a stream just after its last frame, so the record may trail the client's last line; and
    # a speculative answer cancelled for other contexts (pipeline/speculation.py) leaves a cut record before it.
    eventually(lambda: any(o.events_sent == o.events_total and not o.client_disconnected
                           for o in outcomes[finished_before:]), "the model's stream recorded whole", timeout=30)


def _location_blocks(conf: str) -> dict[str, str]:
    """`location <path> { … }` bodies of nginx.conf (no nested blocks in ours)."""
    return dict(re.findall(r"location\s+([^\s{]+)\s*\{([^}]*)\}", conf))


def test_streaming_locations_read_longer_than_the_rest_and_do_not_buffer(topology: Topology) -> None:
    running = (topology.site.prefix / "nginx.conf").read_text()  # the file nginx was started with
    assert running.count("proxy_read_timeout") == NGINX_CONF.read_text().count("proxy_read_timeout")
    default = int(re.search(r"\n        proxy_read_timeout\s+(\d+)s;", running).group(1))  # type: ignore[union-attr]
    blocks = _location_blocks(running)
    for path in STREAMING_LOCATIONS:
        body = blocks[path]
        assert "proxy_buffering            off;" in body and "proxy_cache                off;" in body, path
        read = int(re.search(r"proxy_read_timeout\s+(\d+)s;", body).group(1))  # type: ignore[union-attr]
        assert read >= 300 > default, path


def test_a_client_hanging_up_stops_the_llm_stream_and_the_answer_is_recorded_cancelled(deployment: Deployment) -> None:
    reply = _slow_answer(deployment, chunks=80)
    outcomes = deployment.fakes.llm.stream_outcomes
    finished_before = len(outcomes)
    with visitor(deployment.topology.nginx_url) as client:
        response = _ask_stream(client, "Walk me through every widgets option slowly.")
        lines = response.iter_lines()
        question_id = 0
        for line in lines:
            if line.startswith("data: ") and not question_id:
                question_id = int(json.loads(line.removeprefix("data: ")).get("question_id", 0))
            if line == "event: delta":
                break
        response.close()  # the visitor leaves mid-answer
    eventually(lambda: len(outcomes) > finished_before, "the fake LLM's stream to end", timeout=30)
    outcome = outcomes[-1]
    assert outcome.client_disconnected and outcome.events_sent < len(reply.pieces())

    def state() -> str:
        with psycopg.connect(deployment.topology.database_url) as conn:
            row = conn.execute("SELECT state FROM answering_question WHERE id = %s", [question_id]).fetchone()
        return str(row[0]) if row else ""

    eventually(lambda: state() == "CANCELLED", "the question recorded as cancelled", timeout=30)


def _static_file(topology: Topology) -> str:
    """A collected CSS file large enough for gzip_min_length."""
    css = max((topology.data_dir / "static").rglob("*.css"), key=lambda path: path.stat().st_size)
    assert css.stat().st_size > 1024
    return "/" + css.relative_to(topology.data_dir).as_posix()


def test_only_static_files_are_compressed(deployment: Deployment) -> None:
    deployment.fakes.script.answer = ScriptedReply(text="Compressed? " * 200, chunks=4)
    topology = deployment.topology
    gzip = {"Accept-Encoding": "gzip"}
    with visitor(topology.nginx_url) as client, deployment.api() as api:
        static = client.get(_static_file(topology), headers=gzip)
        script = client.get("/widget.js", headers=gzip)
        page = client.get("/accounts/login/", headers=gzip)
        asked, events = ask_on_page(client, "Is the answer on installing widgets with pip compressed?", **gzip)
        listed = api.get(f"/api/v1/{SLUG}/data-sources/", headers=gzip)
    assert static.headers["content-encoding"] == "gzip" and script.headers["content-encoding"] == "gzip"
    for response in (page, asked, listed):
        assert response.status_code == 200 and "content-encoding" not in response.headers, response.url
    assert answer_text(events).startswith("Compressed?")


def _headers_only_post(topology: Topology, path: str, headers: dict[str, str]) -> httpx.Response:
    """POST only a request's headers: its declared body never follows, so only a refusal can come back."""
    port = int(topology.nginx_url.rsplit(":", 1)[1])
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
             *(f"{name}: {value}" for name, value in headers.items())]
    raw = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        # Read the declared length, not to EOF: nginx lingers before closing on a client that "still sends".
        while not _complete(raw) and (chunk := sock.recv(65536)):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *fields = head.decode("latin-1").split("\r\n")
    parsed = [(name.strip(), value.strip()) for name, value in (field.split(":", 1) for field in fields)]
    return httpx.Response(int(status.split()[1]), headers=parsed, content=body)


def _complete(raw: bytes) -> bool:
    head, found, body = raw.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return bool(found and length and len(body) >= int(length.group(1)))


def test_security_headers_are_on_every_kind_of_response(deployment: Deployment) -> None:
    topology = deployment.topology
    with visitor(topology.nginx_url) as client:
        responses = {"app page": client.get("/accounts/login/"), "static": client.get(_static_file(topology)),
                     "health": client.get("/healthz"), "sse": ask_on_page(client, "How do I install widgets?")[0],
                     "nginx 413": _headers_only_post(topology, "/accounts/login/", {"Content-Length": str(2**31)})}
    for kind, response in responses.items():
        assert response.headers.get_list("x-content-type-options") == ["nosniff"], kind
        assert len(response.headers.get_list("referrer-policy")) == 1, kind
        assert response.headers["server"] == "nginx", kind
    assert responses["nginx 413"].status_code == 413
    assert responses["app page"].headers["x-frame-options"] == "DENY"


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kKmMgG]?)", size).groups()  # type: ignore[union-attr]
    return int(number) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit.lower()]


def test_an_upload_over_either_limit_gets_the_same_json_413(deployment: Deployment, tmp_path: Path) -> None:
    topology = deployment.topology
    app_limit = int(topology.manage("shell", "-c", "from django.conf import settings; "
                                                   "print(settings.OPENGURU_MAX_PDF_BYTES)").split()[-1])
    nginx_limit = _bytes(re.search(r"client_max_body_size\s+(\w+);", NGINX_CONF.read_text()).group(1))  # type: ignore[union-attr]
    assert app_limit < nginx_limit  # every PDF the app takes, with its multipart framing, passes nginx
    big = tmp_path / "big.pdf"
    with big.open("wb") as handle:
        handle.write(b"%PDF-1.7\n")
        handle.truncate(app_limit + 1)  # sparse: a byte over the app's limit
    with deployment.api() as api, big.open("rb") as handle:
        upload = {"pdf_files": ("big.pdf", handle, "application/pdf")}
        over_app = api.post(f"/api/v1/{SLUG}/data-sources/", files=upload)
    over_nginx = _headers_only_post(topology, f"/api/v1/{SLUG}/data-sources/", {
        "X-API-KEY": deployment.api_key, "Content-Type": "multipart/form-data; boundary=x",
        "Content-Length": str(nginx_limit + 1)})
    assert over_app.status_code == 413 and over_app.json()["code"] == "too_large", over_app.text
    assert str(app_limit) in over_app.json()["msg"] and "big.pdf" in over_app.json()["msg"]
    assert over_nginx.status_code == 413 and over_nginx.headers["content-type"] == "application/json", over_nginx.text
    assert over_nginx.json()["code"] == "too_large" and f"{nginx_limit // 2**20} MB" in over_nginx.json()["msg"]


def _counted_addresses(topology: Topology) -> set[str]:
    """Client addresses the app counted guru-page questions for (rate-limit keys in the topology's Redis)."""
    client = redis.Redis.from_url(topology.redis_url, decode_responses=True)
    keys: list[str] = client.keys(f"{RedisCounterStore.PREFIX}rl:web:*")  # type: ignore[assignment]
    return {key.removeprefix(f"{RedisCounterStore.PREFIX}rl:web:").rsplit(":", 1)[0] for key in keys}


def test_the_app_believes_x_forwarded_for_from_nginx_only(deployment: Deployment) -> None:
    topology = deployment.topology
    address = fresh_address()
    spoof = {"X-Forwarded-For": SPOOFED}
    with visitor(topology.nginx_url, address) as via_nginx:
        assert ask_on_page(via_nginx, "How do I install widgets through nginx?", **spoof)[0].status_code == 200
    with visitor(topology.web_url, "127.0.0.1") as direct:
        assert ask_on_page(direct, "How do I install widgets without nginx?", **spoof)[0].status_code == 200
    counted = _counted_addresses(topology)
    assert address in counted  # nginx replaced the client's header with the TCP peer, and the app believed it
    assert "127.0.0.1" in counted  # straight to web: the header was ignored, the peer counted
    assert SPOOFED not in counted


def test_metrics_are_scraped_inside_the_network_never_through_nginx(deployment: Deployment) -> None:
    topology = deployment.topology
    with httpx.Client(timeout=30, trust_env=False) as client:
        outside = client.get(f"{topology.nginx_url}/metrics")
        inside = client.get(f"{topology.web_url}/metrics")  # loopback: allowed without a token by default
    assert outside.status_code == 404
    assert inside.status_code == 200 and "openguru_http_requests" in inside.text
