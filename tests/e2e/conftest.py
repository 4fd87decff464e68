"""The production topology behind nginx (tests/support/topology.py), shared by the test_topology* modules.

One topology for the package: the production pass's PostgreSQL, Redis and Milvus server, compose's processes,
a fake OpenAI-compatible LLM (answers and embeddings), a fake website, Slack and Discord, all on loopback. The
`deployment` fixture walks the README as an operator would, through nginx only: log in, create a guru, issue an
API key and a widget id, add a website that a worker process indexes.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.core.sidecars import SidecarUnavailable
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.http import serve
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_EMBED_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.site_server import SiteFake
from tests.fakes.slack_server import FakeSlack
from tests.support.product import Browser, eventually, sse_events
from tests.support.topology import StoreUrls, Topology, start_topology
from tests.support.topology_nginx import nginx_binary

SLUG = "widgets"
WIDGET_ORIGIN = "https://docs.example.com"
FIRST_PAGE = "/docs/install"
ANSWER = "Install it with pip inside a virtual environment [1]."
# Questions per minute per client address on guru pages: small, so the scale-out test can pass it.
WEB_RATE_LIMIT = 6
_addresses = itertools.count(1)


class TopologyScript(ReplyScript):
    """The fake LLM by request shape: every context graded relevant, the streamed answer is `answer`."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = ScriptedReply(text=ANSWER, chunks=4)

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)
        properties = (request.json_schema or {}).get("properties", {})
        if "grades" in properties:
            return ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(50)]})
        if "prettified" in properties:
            last = request.messages[-1][1] if request.messages else ""
            return ScriptedReply(json={"prettified": last[:200] or "Question", "intent": "question",
                                       "answer_length": "short", "in_scope": True, "retrieval_query": last[:200],
                                       "reply": ""})
        return self.answer if request.stream else ScriptedReply(text="Installing widgets")


@dataclass
class Fakes:
    llm: OpenAIFakeServer
    script: TopologyScript
    site: SiteFake
    slack: FakeSlack
    discord: FakeDiscord


@dataclass
class Deployment:
    """What the operator set up through nginx: the admin's session, the guru, its key, widget and first source."""

    topology: Topology
    fakes: Fakes
    admin: Browser
    api_key: str
    widget_key: str
    source_id: int

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.topology.nginx_url, headers={"X-API-KEY": self.api_key}, timeout=60)


def fresh_address() -> str:
    """A loopback address no earlier request came from: its own rate-limit counters (127.0.1.x)."""
    return f"127.0.1.{next(_addresses)}"


def visitor(base_url: str, address: str | None = None) -> httpx.Client:
    """An HTTP client connecting from its own loopback address."""
    transport = httpx.HTTPTransport(local_address=address or fresh_address())
    return httpx.Client(base_url=base_url, transport=transport, timeout=60)


def ask_on_page(client: httpx.Client, question: str, **headers: str) -> tuple[httpx.Response, list[Any]]:
    """Ask on /g/<slug>/ as its page does (CSRF cookie, then POST); the response and its SSE events."""
    client.get(f"/g/{SLUG}/").raise_for_status()
    response = client.post(f"/g/{SLUG}/ask/", json={"question": question},
                           headers={"X-CSRFToken": client.cookies["csrftoken"], **headers})
    return response, sse_events(response.content) if response.status_code == 200 else []


def answer_text(events: list[tuple[str, dict[str, Any]]]) -> str:
    assert [name for name, _ in events if name == "error"] == [], events
    assert events and events[-1][0] == "done", events[-3:]
    return "".join(data["text"] for name, data in events if name == "delta")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"TOPOLOGY TESTS CANNOT RUN: {reason} (CI=true forbids skipping them)", pytrace=False)
    pytest.skip(f"TOPOLOGY TESTS SKIPPED: {reason}")


@pytest.fixture(scope="package")
def topology_fakes() -> Iterator[Fakes]:
    script = TopologyScript()
    llm = OpenAIFakeServer(script=script)
    site = SiteFake()
    with serve(llm.route) as llm_url, serve(site.route) as site_url, FakeSlack() as slack, \
            FakeDiscord() as discord:
        llm.base_url, site.base_url = llm_url, site_url
        yield Fakes(llm, script, site, slack, discord)


@pytest.fixture(autouse=True)
def _default_answer(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests that script another answer for the package's fake LLM get the default back after them."""
    yield
    if "topology" in request.fixturenames:
        fakes: Fakes = request.getfixturevalue("topology_fakes")
        fakes.script.answer = ScriptedReply(text=ANSWER, chunks=4)


@pytest.fixture(scope="package")
def topology(tmp_path_factory: pytest.TempPathFactory, topology_fakes: Fakes) -> Iterator[Topology]:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs the production profile's PostgreSQL, Redis and Milvus server (./openguru test, pass 2)")
    try:
        nginx_binary()
    except SidecarUnavailable as exc:
        _unavailable(str(exc))
    env = {
        "OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": topology_fakes.llm.api_base,
        "OPENGURU_CHAT_MODEL": FAKE_CHAT_MODEL, "OPENGURU_EMBEDDER": "openai",
        "OPENGURU_EMBEDDING_MODEL": FAKE_EMBED_MODEL, "OPENGURU_EMBEDDING_DIMENSION": "384",
        "OPENGURU_FETCH_ALLOWLIST": topology_fakes.site.base_url.removeprefix("http://"),
        "OPENGURU_WEB_RATE_LIMIT": str(WEB_RATE_LIMIT),
        # The scale-out test queues four sources of one guru at once; both workers must get some.
        "OPENGURU_INGEST_CONCURRENCY": "4",
        "OPENGURU_SLACK_API_URL": topology_fakes.slack.api_url, "OPENGURU_SLACK_SOCKET_RESCAN_S": "0.5",
        "OPENGURU_DISCORD_API_URL": topology_fakes.discord.api_url,
        "OPENGURU_DISCORD_GATEWAY_URL": topology_fakes.discord.gateway_url, "OPENGURU_DISCORD_RESCAN_S": "0.5",
    }
    running = start_topology(tmp_path_factory.mktemp("topology"), StoreUrls.from_environ(), env=env, slack=True,
                             discord=True)
    try:
        yield running
    finally:
        running.stop()


def _issue_api_key(admin: Browser) -> str:
    page = admin.submit(f"/dashboard/g/{SLUG}/channels/keys/new/",
                        {"name": "smoke", "scope": "all", "rate_limit_per_minute": "1000"})
    found = re.search(r'id="new-key-value"><code>([^<]+)</code>', page)
    assert found, "the new API key was not shown"
    return found.group(1)


def _issue_widget_id(admin: Browser) -> str:
    page = admin.submit(f"/dashboard/g/{SLUG}/channels/widgets/new/", {
        "name": "docs", "allowed_origins": WIDGET_ORIGIN, "rate_limit_per_minute": "1000",
        "per_ip_rate_limit_per_minute": "100", "active": "on"})
    found = re.search(r"data-widget-id=(?:\"|&quot;)([^\"&]+)", page)
    assert found, "the widget snippet was not shown"
    return found.group(1)


def source_status(client: httpx.Client, source_id: int) -> dict[str, Any]:
    response = client.get(f"/api/v1/{SLUG}/data-sources/{source_id}/")
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


@pytest.fixture(scope="package")
def deployment(topology: Topology, topology_fakes: Fakes) -> Deployment:
    admin = Browser(topology.nginx_url)
    home = admin.submit("/accounts/login/", {"username": topology.admin_username, "password": topology.admin_password})
    assert "All gurus" in home
    admin.submit("/dashboard/gurus/new/", {"slug": SLUG, "name": "Widgets Guru", "domain_knowledge": "Widgets",
                                           "base_color": "#1f6feb", "language": "en", "active": "on"})
    eventually(lambda: 'class="badge ok">ready<' in admin.get("/"), "the guru's collection")
    deployment = Deployment(topology, topology_fakes, admin, _issue_api_key(admin), _issue_widget_id(admin), 0)
    with deployment.api() as api:
        added = api.post(f"/api/v1/{SLUG}/data-sources/",
                         json={"website_urls": [topology_fakes.site.base_url + FIRST_PAGE], "website_mode": "page"})
        assert added.status_code == 200, added.text
        deployment.source_id = added.json()["created"][0]["id"]
        eventually(lambda: source_status(api, deployment.source_id)["status"] in ("INDEXED", "FAILED"), "indexing")
        status = source_status(api, deployment.source_id)
    assert status["status"] == "INDEXED" and status["chunk_count"] > 0, status
    return deployment
