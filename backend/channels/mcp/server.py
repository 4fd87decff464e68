"""The MCP server (the official SDK's MCPServer): the ask, search, summary and list_gurus tools, either transport."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from backend.channels.errors import error_body
from backend.channels.mcp import tools
from backend.channels.mcp.auth import Caller
from backend.core.db import release_connections
from backend.core.errors import AppError
from backend.pipeline.understanding import MAX_QUESTION_CHARS

logger = logging.getLogger(__name__)

MAX_SEARCH_RESULTS = 20
INSTRUCTIONS = (
    "OpenGuru answers questions from a guru's own indexed sources (documentation, repositories, PDFs, videos) "
    "and declines when they do not cover the question. Use list_gurus to see which gurus you may ask, ask for "
    "a cited answer with a trust score, search for the raw passages without an answer, and summary for an "
    "overview of what a guru (or one of its sources) covers."
)

Model = TypeVar("Model", bound=BaseModel)
CallerOf = Callable[[Context], Caller]
GuruSlug = Annotated[str | None, Field(description="The guru's slug (see list_gurus); optional when the "
                                                   "credential is for one guru.", max_length=200)]
QuestionText = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)]


def _in_thread(fn: Callable[[], Model]) -> Model:
    """Run Django code in the SDK's worker thread, giving back its database connection afterwards."""
    close_old_connections()
    try:
        return fn()
    finally:
        release_connections()


async def _result(fn: Callable[[], Model]) -> CallToolResult:
    """The tool's model as structured content (and its JSON as text); an AppError as an isError result
    carrying the error's `{"code", "msg"}` (and `error_id`), as every other channel reports it."""
    try:
        model = await anyio.to_thread.run_sync(functools.partial(_in_thread, fn))
    except AppError as exc:
        body = error_body(exc)
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))],
                              structured_content=body, is_error=True)
    data: dict[str, Any] = model.model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data)


def build_server(caller_of: CallerOf) -> MCPServer:
    """The tools, each asking `caller_of(ctx)` who calls (an API key's user over HTTP, the operator on stdio)."""
    server: MCPServer = MCPServer("openguru", title="OpenGuru", instructions=INSTRUCTIONS)

    @server.tool(title="Ask a guru")
    async def ask(question: QuestionText, ctx: Context, guru: GuruSlug = None,
                  session_id: Annotated[str | None, Field(max_length=64, description=(
                      "Continue the conversation an earlier ask returned (its session_id)."))] = None,
                  ) -> Annotated[CallToolResult, tools.AskResult]:
        """Answer a question from the guru's sources: the answer with cited references, a trust score
        (0-100), a session_id for follow-ups and a link to the answer. out_of_context is true when the
        guru declines because its sources do not cover the question."""
        caller = caller_of(ctx)
        return await _result(lambda: tools.ask(caller, question, guru, session_id))

    @server.tool(title="Search a guru's sources")
    async def search(query: QuestionText, ctx: Context, guru: GuruSlug = None,
                     limit: Annotated[int, Field(ge=1, le=MAX_SEARCH_RESULTS)] = 5,
                     ) -> Annotated[CallToolResult, tools.SearchResult]:
        """The passages of the guru's sources most relevant to the query, best first, with their scores:
        retrieval only, no generated answer and no model call (the retriever keeps the five best sources)."""
        caller = caller_of(ctx)
        return await _result(lambda: tools.search(caller, query, guru, limit))

    @server.tool(title="Read a guru's summary")
    async def summary(ctx: Context, guru: GuruSlug = None,
                      source_id: Annotated[int | None, Field(ge=1, description=(
                          "One source's summary instead of the guru's (a source id of the guru)."))] = None,
                      ) -> Annotated[CallToolResult, tools.SummaryResult]:
        """The guru's summary of all its sources (or one source's summary): its text, who wrote it (a model,
        or an extract of sentences picked from the sources) and the sources it covers. text is null, and
        note says why, until the summary is written. No model call."""
        caller = caller_of(ctx)
        return await _result(lambda: tools.summary(caller, guru, source_id))

    @server.tool(title="List the gurus")
    async def list_gurus(ctx: Context) -> Annotated[CallToolResult, tools.GuruList]:
        """The gurus you may ask: slug, name and what each knows about."""
        caller = caller_of(ctx)
        return await _result(lambda: tools.list_gurus(caller))

    return server


def http_session_manager(caller_of: CallerOf) -> StreamableHTTPSessionManager:
    """A fresh server's streamable HTTP session manager (a manager runs only once), stateless: several web
    workers serve /mcp/. Host checks are Django's ALLOWED_HOSTS, not the SDK's loopback-only default."""
    server = build_server(caller_of)
    server.streamable_http_app(stateless_http=True, transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=False))
    return server.session_manager
