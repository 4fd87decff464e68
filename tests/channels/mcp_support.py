"""Helpers of the MCP tests: a session of the SDK's own client, and a tool result's structured content."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

QUESTION = "How do I retry a task?"


@asynccontextmanager
async def http_session(endpoint: str, key: str | None) -> AsyncIterator[ClientSession]:
    """An initialized MCP session over streamable HTTP, sending `key` as X-API-KEY."""
    headers = {"X-API-KEY": key} if key is not None else {}
    async with (httpx2.AsyncClient(headers=headers, timeout=60) as http,
                streamable_http_client(endpoint, http_client=http) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """(is_error, the structured result): the text content is the same JSON, which the test also checks."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    text = result.content[0]
    assert isinstance(text, TextContent)
    if result.structured_content is None:  # the SDK's own refusals (bad arguments) are text only
        return result.is_error, {"text": text.text}
    assert json.loads(text.text) == result.structured_content
    return result.is_error, dict(result.structured_content)


async def assert_answers_and_searches(session: ClientSession, *, link_base: str, guru: str | None) -> None:
    """ask (references, trust score, session), a follow-up in the same session, then search."""
    is_error, first = await call(session, "ask", question=QUESTION, **({"guru": guru} if guru else {}))
    assert not is_error, first
    assert first["answer"] and not first["out_of_context"]
    assert first["references"] and {"n", "title", "link"} <= set(first["references"][0])
    assert 0 < first["trust_score"] <= 100
    assert first["question_url"].startswith(f"{link_base}/g/docs/answers/")
    is_error, follow_up = await call(session, "ask", question="What does the countdown argument do?",
                                     session_id=first["session_id"], **({"guru": guru} if guru else {}))
    assert not is_error, follow_up
    assert follow_up["session_id"] == first["session_id"]
    is_error, found = await call(session, "search", query="countdown retry delay", limit=2,
                                 **({"guru": guru} if guru else {}))
    assert not is_error, found
    results = found["results"]
    assert 1 <= len(results) <= 2 and "countdown" in results[0]["text"]
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert all(isinstance(r["summary"], bool) for r in results)
