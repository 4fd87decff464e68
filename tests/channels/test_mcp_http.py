"""The MCP endpoint /mcp/ under uvicorn, driven by the SDK's own streamable HTTP client with API keys."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from mcp.shared.exceptions import MCPError
from mcp_types import LATEST_PROTOCOL_VERSION
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.answering.models import Channel, Question
from backend.api.services import api_key_create, api_key_revoke
from backend.core.sidecars import SidecarUnavailable, free_port, wait_for_port
from backend.gurus.models import Guru, VectorCollection
from backend.pipeline.understanding import MAX_QUESTION_CHARS
from backend.sources.models import Summarization
from backend.sources.summary_vectors import summary_vectors_sync
from tests.channels.mcp_support import QUESTION, assert_answers_and_searches, call, http_session
from tests.integration.answering.answer_support import make_indexed_guru
from tests.support.summary_rows import MODEL, source_root
from tests.support.topology_compose import NGINX_ADDRESS
from tests.support.topology_nginx import NginxSite, nginx_argv, nginx_binary, write_config

pytestmark = pytest.mark.django_db(transaction=True)

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def docs(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Iterator[Guru]:
    cache.clear()  # the keys' rate-limit counters live in the cache, which outlives a test
    guru = make_indexed_guru(django_capture_on_commit_callbacks)
    other = Guru.objects.create(slug="other", name="Other Guru", domain_knowledge="something else")
    other.maintainers.add(guru.maintainers.get())
    yield guru
    cache.clear()


@pytest.fixture
def endpoint(asgi_live_server_lifespan: str) -> str:
    return f"{asgi_live_server_lifespan}/mcp/"


def _key(maintained: Guru, **kwargs: Any) -> str:
    return api_key_create(user=maintained.maintainers.get(), name="agent", **kwargs).raw


def _post(endpoint: str, key: str | None) -> httpx2.Response:
    headers = {**ACCEPT, **({"X-API-KEY": key} if key is not None else {})}
    return httpx2.post(endpoint, json=INITIALIZE, headers=headers, timeout=30)


def test_an_agent_lists_the_gurus_asks_with_a_follow_up_and_searches(docs: Guru, endpoint: str) -> None:
    key = _key(docs)

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            assert {t.name for t in (await session.list_tools()).tools} == {"ask", "search", "summary", "list_gurus"}
            _, listed = await call(session, "list_gurus")
            assert [g["slug"] for g in listed["gurus"]] == ["docs", "other"]
            await assert_answers_and_searches(session, link_base=endpoint.removesuffix("/mcp/"), guru="docs")

    anyio.run(scenario)
    asked = Question.objects.filter(guru=docs).order_by("pk")
    assert [q.binge.channel if q.binge else "" for q in asked] == [Channel.MCP, Channel.MCP]
    assert asked[0].binge_id == asked[1].binge_id


def test_refusals_are_flagged_and_bad_input_is_a_tool_error(docs: Guru, endpoint: str) -> None:
    key = _key(docs)

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            is_error, refused = await call(session, "ask", guru="docs", question="Who painted the Mona Lisa?")
            assert not is_error and refused["out_of_context"] and refused["references"] == []
            is_error, body = await call(session, "ask", question=QUESTION)  # two gurus: which one?
            assert is_error and body["code"] == "guru_required"
            is_error, body = await call(session, "ask", guru="docs", question=QUESTION,
                                        session_id="00000000-0000-4000-8000-000000000000")
            assert is_error and body["code"] == "not_found"  # the answer's own error event, as code and msg
            is_error, body = await call(session, "ask", guru="docs", question=QUESTION, session_id="nope")
            assert is_error and body["code"] == "invalid_session"
            is_error, body = await call(session, "ask", guru="docs", question="x" * (MAX_QUESTION_CHARS + 1))
            assert is_error and str(MAX_QUESTION_CHARS) in body["text"]
            is_error, body = await call(session, "search", guru="docs", query="retry", limit=21)
            assert is_error and "limit" in body["text"]

    anyio.run(scenario)


def test_an_agent_reads_the_guru_summary_and_a_sources(docs: Guru, endpoint: str) -> None:
    key = _key(docs)
    manual = docs.sources.get()
    Summarization.objects.filter(guru=docs).delete()  # only the tree this test makes
    source_root(manual, "The manual explains retries and countdowns.", is_root=True)  # one source: one tree
    summary_vectors_sync(guru_id=docs.pk, collection=VectorCollection.objects.get(guru_id=docs.pk).name,
                         source_id=manual.pk)  # searchable, as the summary task leaves it
    base = endpoint.removesuffix("/mcp/")

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            is_error, summary = await call(session, "summary", guru="docs")
            assert not is_error, summary
            assert summary["text"] == "The manual explains retries and countdowns."
            assert summary["label"] == f"Summary by {MODEL}" and summary["extractive"] is False
            assert summary["source_id"] is None and summary["partial"] is False
            assert summary["sources"] == [{"id": manual.pk, "title": "Manual",
                                           "link": f"{base}/sources/{manual.pk}/file"}]
            is_error, one = await call(session, "summary", guru="docs", source_id=manual.pk)
            assert not is_error and one["source_id"] == manual.pk and one["text"] == summary["text"]
            is_error, none = await call(session, "summary", guru="other")
            assert not is_error and none["text"] is None and none["sources"] == [] and none["note"]
            is_error, body = await call(session, "summary", guru="docs", source_id=manual.pk + 1000)
            assert is_error and body["code"] == "not_found"
            is_error, found = await call(session, "search", guru="docs", query="What does the manual explain?",
                                         limit=20)
            assert not is_error and any(r["summary"] for r in found["results"]), found
            assert not all(r["summary"] for r in found["results"])  # the chunks of its text are not summaries

    anyio.run(scenario)


def test_a_missing_wrong_or_revoked_key_is_a_401(docs: Guru, endpoint: str) -> None:
    issued = api_key_create(user=docs.maintainers.get(), name="old")
    api_key_revoke(api_key=issued.api_key)
    for key in (None, "og_not-a-key", issued.raw):
        response = _post(endpoint, key)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthenticated" and response.json()["msg"]

    async def refused() -> None:
        async with http_session(endpoint, "og_not-a-key"):
            pass

    with pytest.raises(BaseExceptionGroup) as refusal:  # the SDK's task groups wrap the client's error
        anyio.run(refused)
    assert refusal.group_contains(MCPError, depth=None)


def test_a_key_scoped_to_one_guru_sees_only_that_guru(docs: Guru, endpoint: str) -> None:
    key = _key(docs, guru=docs)

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            _, listed = await call(session, "list_gurus")
            assert [g["slug"] for g in listed["gurus"]] == ["docs"]
            is_error, found = await call(session, "search", query="countdown")  # no guru named: the key's
            assert not is_error and found["guru"] == "docs" and found["results"]
            is_error, body = await call(session, "search", guru="other", query="countdown")
            assert is_error and body["code"] == "forbidden"
            is_error, body = await call(session, "summary", guru="other")  # the same rule as search
            assert is_error and body["code"] == "forbidden"

    anyio.run(scenario)


def test_a_key_of_someone_who_maintains_no_guru_sees_none(docs: Guru, endpoint: str) -> None:
    stranger = User.objects.create_user("stranger")
    key = api_key_create(user=stranger, name="agent").raw

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            assert (await call(session, "list_gurus"))[1] == {"gurus": []}
            is_error, body = await call(session, "search", guru="docs", query="countdown")
            assert is_error and body["code"] == "forbidden"

    anyio.run(scenario)


def test_the_key_rate_limit_counts_mcp_requests(docs: Guru, endpoint: str) -> None:
    key = _key(docs, rate_limit_per_minute=2)
    assert [_post(endpoint, key).status_code for _ in range(2)] == [200, 200]
    limited = _post(endpoint, key)
    assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1


@pytest.mark.slow
def test_an_agent_reaches_mcp_through_the_repositorys_nginx(
    docs: Guru, asgi_live_server_lifespan: str, tmp_path: Path
) -> None:
    """The repository's nginx.conf (rendered for loopback, as the topology tests run it) in front of the app."""
    try:
        binary = nginx_binary()
    except SidecarUnavailable as exc:
        pytest.skip(str(exc))
    port = free_port()
    site = NginxSite(listen=f"127.0.0.1:{port}", upstream=asgi_live_server_lifespan.removeprefix("http://"),
                     bind=NGINX_ADDRESS, static_parent=tmp_path / "data", prefix=tmp_path / "nginx")
    site.prefix.mkdir()
    write_config(site, binary)
    nginx = subprocess.Popen(nginx_argv(binary, site), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    key = _key(docs)

    async def scenario() -> None:
        async with http_session(f"http://127.0.0.1:{port}/mcp/", key) as session:
            await assert_answers_and_searches(session, link_base=f"http://127.0.0.1:{port}", guru="docs")

    try:
        wait_for_port("127.0.0.1", port, timeout=30, proc=nginx, log_path=site.error_log)
        anyio.run(scenario)
    finally:
        nginx.terminate()
        nginx.wait(timeout=20)


def test_search_gives_a_maintainers_note_about_the_query_first(docs: Guru, endpoint: str) -> None:
    from backend.answering.memory import memory_correct

    asked = Question.objects.create(guru=docs, user_question="How long does a retry wait?",
                                    question="How long does a retry wait?", slug="wait")
    memory_correct(question=asked, text="Since version 6 a retry waits at least 30 seconds.", author=None)
    key = _key(docs)

    async def scenario() -> None:
        async with http_session(endpoint, key) as session:
            is_error, found = await call(session, "search", guru="docs", query="How long does a retry wait?", limit=3)
            assert not is_error and found["results"][0]["title"] == "Maintainer note"
            assert "30 seconds" in found["results"][0]["text"] and found["results"][0]["link"] == ""
            assert any(r["title"] != "Maintainer note" for r in found["results"][1:])

    anyio.run(scenario)
