"""OpenAI adapter behaviour beyond the port contracts: Retry-After, embeddings, disconnects, errors, tool wire."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.embeddings.openai_embed import OpenAIEmbedder
from backend.adapters.llm.fake import ScriptedReply
from backend.adapters.llm.openai_chat import OpenAIChatModel
from backend.adapters.retry import retry_after_from_headers as parse_retry_after
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import CancelToken, Flow, Message, Role, TextDelta, ToolCall, ToolMessage, ToolSpec
from tests.fakes.http import serve
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer, StreamOutcome

MESSAGES = [Message(Role.USER, "What is a task?")]


def chat_for(server: OpenAIFakeServer, **overrides: object) -> OpenAIChatModel:
    options: dict[str, object] = {"api_key": FAKE_OPENAI_KEY, "model": FAKE_CHAT_MODEL, "base_url": server.api_base,
                                  "timeout": 2.0, "max_retries": 2, "backoff_base": 0.001, **overrides}
    return OpenAIChatModel(**options)  # type: ignore[arg-type]


def embedder_for(server: OpenAIFakeServer, **overrides: object) -> OpenAIEmbedder:
    options: dict[str, object] = {"api_key": FAKE_OPENAI_KEY, "dimension": 384, "base_url": server.api_base,
                                  "timeout": 2.0, "max_retries": 2, "backoff_base": 0.001, **overrides}
    return OpenAIEmbedder(**options)  # type: ignore[arg-type]


def test_retry_after_is_honoured(openai_server: OpenAIFakeServer) -> None:
    openai_server.retry_after = "0.4"
    openai_server.script.push(ScriptedReply(status=429), ScriptedReply(text="after the wait"))
    started = time.monotonic()
    assert chat_for(openai_server).complete(MESSAGES, max_tokens=5, flow=Flow.ANSWER).text == "after the wait"
    assert time.monotonic() - started >= 0.4


def test_retry_after_is_capped_by_backoff_max(openai_server: OpenAIFakeServer) -> None:
    openai_server.retry_after = "3600"
    openai_server.script.push(ScriptedReply(status=503), ScriptedReply(text="soon enough"))
    started = time.monotonic()
    chat = chat_for(openai_server, backoff_max=0.05)
    assert chat.complete(MESSAGES, max_tokens=5, flow=Flow.ANSWER).text == "soon enough"
    assert time.monotonic() - started < 30  # not the 3600 s the server asked for


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [({"Retry-After": "2"}, 2.0), ({"retry-after-ms": "250"}, 0.25), ({"Retry-After": "soon"}, None), ({}, None)],
)
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds


def test_parse_retry_after_http_date() -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (parse_retry_after({"Retry-After": later}) or 0) <= 30


def test_sdk_asks_for_base64_embeddings_and_they_decode_to_the_servers_vectors(
    openai_server: OpenAIFakeServer,
) -> None:
    vector = embedder_for(openai_server).embed_query("Celery workers ingest sources")
    sent = openai_server.embeddings_script.requests[-1].raw
    assert sent["encoding_format"] == "base64" and sent["dimensions"] == 384
    expected = HashingEmbedder(384, max_input_tokens=8191).embed_query("Celery workers ingest sources")
    assert vector == pytest.approx(expected, abs=1e-6)


def test_dimensions_is_sent_only_to_models_that_support_it(openai_server: OpenAIFakeServer) -> None:
    vector = embedder_for(openai_server, model="text-embedding-ada-002", dimension=1536).embed_query("ada")
    assert len(vector) == 1536
    assert "dimensions" not in openai_server.embeddings_script.requests[-1].raw


def test_a_wrong_dimension_is_a_permanent_error_naming_the_real_one(openai_server: OpenAIFakeServer) -> None:
    embedder = embedder_for(openai_server, model="text-embedding-ada-002", dimension=384)
    with pytest.raises(PermanentServiceError, match="returned 1536-d vectors"):
        embedder.embed_query("mismatch")


def test_documents_are_embedded_in_batches_in_order(openai_server: OpenAIFakeServer) -> None:
    texts = [f"document number {index}" for index in range(5)]
    vectors = embedder_for(openai_server, batch_size=2).embed_documents(texts)
    batches = [[text for _, text in request.messages] for request in openai_server.embeddings_script.requests]
    assert batches == [texts[0:2], texts[2:4], texts[4:5]]
    reference = HashingEmbedder(384, max_input_tokens=8191)
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(reference.embed_query(text), abs=1e-6)


def test_embedding_server_errors_are_retried(openai_server: OpenAIFakeServer) -> None:
    openai_server.embeddings_script.push(ScriptedReply(status=503), ScriptedReply(status=429))
    assert len(embedder_for(openai_server).embed_query("eventually")) == 384
    assert len(openai_server.embeddings_script.requests) == 3


def wait_for_stream_outcome(server: OpenAIFakeServer, timeout: float = 3.0) -> StreamOutcome:
    deadline = time.monotonic() + timeout
    while not server.stream_outcomes and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.stream_outcomes[-1]


def test_cancelling_a_stream_disconnects_from_the_server(openai_server: OpenAIFakeServer) -> None:
    openai_server.script.push(ScriptedReply(text="x" * 200, chunks=20, chunk_delay=0.05))
    cancel = CancelToken()
    events = []
    for event in chat_for(openai_server).stream(MESSAGES, max_tokens=50, flow=Flow.ANSWER, cancel=cancel):
        events.append(event)
        cancel.cancel()
    assert events == [TextDelta("x" * 10)]
    outcome = wait_for_stream_outcome(openai_server)
    assert outcome.client_disconnected and outcome.events_sent < outcome.events_total


def test_a_cancelled_token_sends_no_request(openai_server: OpenAIFakeServer) -> None:
    cancel = CancelToken()
    cancel.cancel()
    assert list(chat_for(openai_server).stream(MESSAGES, max_tokens=5, flow=Flow.ANSWER, cancel=cancel)) == []
    assert openai_server.script.requests == []


def test_a_finished_stream_reads_to_the_end(openai_server: OpenAIFakeServer) -> None:
    openai_server.cached_prompt_tokens = 4
    events = list(chat_for(openai_server).stream(MESSAGES, max_tokens=5, flow=Flow.ANSWER))
    assert events[-1].cached_prompt_tokens == 4  # type: ignore[union-attr]
    assert not wait_for_stream_outcome(openai_server).client_disconnected


def test_a_wrong_api_key_is_permanent_and_says_so(openai_server: OpenAIFakeServer) -> None:
    with pytest.raises(PermanentServiceError, match="rejected the API key"):
        chat_for(openai_server, api_key="sk-wrong").complete(MESSAGES, max_tokens=5, flow=Flow.ANSWER)
    with pytest.raises(PermanentServiceError, match="rejected the API key"):
        embedder_for(openai_server, api_key="sk-wrong").embed_query("no")
    assert openai_server.refused == [(401, "/v1/chat/completions"), (401, "/v1/embeddings")]


def test_an_unknown_model_is_permanent_and_named(openai_server: OpenAIFakeServer) -> None:
    chat = chat_for(openai_server, model="gpt-nonexistent")
    with pytest.raises(PermanentServiceError, match="Model 'gpt-nonexistent' not found at http://127.0.0.1"):
        chat.complete(MESSAGES, max_tokens=5, flow=Flow.ANSWER)
    with pytest.raises(PermanentServiceError, match="Model 'no-such-embedder' not found"):
        embedder_for(openai_server, model="no-such-embedder").embed_query("no")
    assert [status for status, _ in openai_server.refused] == [404, 404]


def test_complete_json_sends_a_strict_named_schema_and_retries_missing_keys(openai_server: OpenAIFakeServer) -> None:
    schema = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"],
              "additionalProperties": False}
    openai_server.script.push(ScriptedReply(json={"other": 1}), ScriptedReply(json={"intent": "question"}))
    result = chat_for(openai_server).complete_json(MESSAGES, schema=schema, schema_name="understanding",
                                                   max_tokens=20, flow=Flow.UNDERSTAND)
    assert result.data == {"intent": "question"}
    sent = openai_server.script.requests[-1].raw["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "understanding", "schema": schema, "strict": True}}
    assert len(openai_server.script.requests) == 2
    assert openai_server.script.requests[-1].raw["max_tokens"] == 20  # compatible servers know only max_tokens


def test_a_missing_key_for_api_openai_com_fails_before_any_request() -> None:
    with pytest.raises(PermanentServiceError, match="OPENAI_API_KEY"):
        OpenAIChatModel(api_key="", model="gpt-4o-mini")


def test_an_unreachable_server_is_transient() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, so nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = OpenAIChatModel(api_key="k", model="m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0,
                           max_retries=1, backoff_base=0.001)
    with pytest.raises(TransientServiceError, match="Cannot reach"):
        chat.complete(MESSAGES, max_tokens=5, flow=Flow.ANSWER)


SEARCH_TOOL = ToolSpec("search", "Search the sources.", {"type": "object", "properties": {"query": {"type": "string"}},
                                                         "required": ["query"]})
TOOL_ASK = [ToolMessage(Role.SYSTEM, "Use the tools."), ToolMessage(Role.USER, "Compare A and B.")]


def test_tools_are_offered_as_functions_without_forcing_a_call(openai_server: OpenAIFakeServer) -> None:
    openai_server.cached_prompt_tokens = 5
    openai_server.script.push(ScriptedReply(text="No tool needed.", prompt_tokens=20, completion_tokens=4))
    turn = chat_for(openai_server).complete_tools(TOOL_ASK, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT)
    assert (turn.text, turn.calls) == ("No tool needed.", ())
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.usage.cached_prompt_tokens) == (20, 4, 5)
    sent = openai_server.script.requests[-1].raw
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "search", "description": "Search the sources.", "parameters": SEARCH_TOOL.parameters}}]
    assert "tool_choice" not in sent and "parallel_tool_calls" not in sent and "stream" not in sent


def test_no_tools_sends_no_empty_tools_array(openai_server: OpenAIFakeServer) -> None:
    turn = chat_for(openai_server).complete_tools(TOOL_ASK, [], max_tokens=50, flow=Flow.AGENT)
    assert turn.text == "ok" and "tools" not in openai_server.script.requests[-1].raw


def test_the_second_request_carries_the_calls_and_their_results_in_order(openai_server: OpenAIFakeServer) -> None:
    openai_server.script.push(ScriptedReply(tool_calls=(("search", {"query": "A"}), ("search", "{broken"))),
                              ScriptedReply(text="Done."))
    chat = chat_for(openai_server)
    first = chat.complete_tools(TOOL_ASK, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT)
    conversation = [*TOOL_ASK, ToolMessage(Role.ASSISTANT, first.text, calls=first.calls),
                    ToolMessage(Role.TOOL, "result A", call_id="call_1", name="search"),
                    ToolMessage(Role.TOOL, "invalid arguments", call_id="call_2", name="search")]
    assert chat.complete_tools(conversation, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT).text == "Done."
    assert openai_server.script.requests[-1].raw["messages"] == [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "Compare A and B."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"query": "A"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{broken"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "result A"},
        {"role": "tool", "tool_call_id": "call_2", "content": "invalid arguments"},
    ]


def test_an_assistant_turn_with_text_and_calls_keeps_both(openai_server: OpenAIFakeServer) -> None:
    call = ToolCall(id="call_9", name="search", arguments={"query": "é"})
    conversation = [*TOOL_ASK, ToolMessage(Role.ASSISTANT, "Let me look.", calls=(call,)),
                    ToolMessage(Role.TOOL, "found", call_id="call_9", name="search")]
    chat_for(openai_server).complete_tools(conversation, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT)
    wire_call = {"id": "call_9", "type": "function", "function": {"name": "search", "arguments": '{"query": "é"}'}}
    assert openai_server.script.requests[-1].raw["messages"][2] == {
        "role": "assistant", "content": "Let me look.", "tool_calls": [wire_call]}
    assert openai_server.script.requests[-1].tool_results == [("call_9", "search", "found")]


def test_a_result_that_answers_no_call_is_rejected_as_permanent(openai_server: OpenAIFakeServer) -> None:
    orphan = [*TOOL_ASK, ToolMessage(Role.TOOL, "stray", call_id="call_1", name="search")]
    with pytest.raises(PermanentServiceError, match="HTTP 400"):
        chat_for(openai_server).complete_tools(orphan, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT)
    assert openai_server.script.requests == []


def test_a_compatible_servers_loose_tool_reply_is_read(openai_server: OpenAIFakeServer) -> None:
    """Text beside calls (as some models via OpenRouter send), a missing and a repeated id, empty arguments."""
    calls = [{"type": "function", "function": {"name": "search", "arguments": '{"query": "A"}'}},
             {"id": "x", "type": "function", "function": {"name": "summary", "arguments": ""}},
             {"id": "x", "type": "function", "function": {"name": "search", "arguments": "[1]"}}]
    reply = {"id": "c", "object": "chat.completion", "created": 0, "model": FAKE_CHAT_MODEL, "usage": None,
             "choices": [{"index": 0, "finish_reason": "tool_calls",
                          "message": {"role": "assistant", "content": "Looking.", "tool_calls": calls}}]}
    with serve(lambda request, responder: responder.json(reply)) as url:
        chat = OpenAIChatModel(api_key="k", model=FAKE_CHAT_MODEL, base_url=f"{url}/v1", timeout=2.0)
        turn = chat.complete_tools(TOOL_ASK, [SEARCH_TOOL], max_tokens=50, flow=Flow.AGENT)
    assert turn.text == "Looking." and turn.usage.prompt_tokens == 0
    assert [(c.name, c.arguments, c.invalid) for c in turn.calls] == [
        ("search", {"query": "A"}, ""), ("summary", {}, ""), ("search", {}, "[1]")]
    assert len({c.id for c in turn.calls}) == 3
