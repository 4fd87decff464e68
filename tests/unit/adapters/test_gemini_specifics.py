"""Gemini-only behaviour, seen from the fake server: roles, schema, tools, task types, batching, cancel, key errors."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
from typing import Any

import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.embeddings.gemini_embed import GeminiEmbedder
from backend.adapters.llm.fake import ScriptedReply
from backend.adapters.llm.gemini_chat import GeminiChatModel
from backend.adapters.llm.gemini_common import GeminiClient
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import (
    CancelToken,
    Flow,
    Message,
    Role,
    TextDelta,
    ToolCall,
    ToolMessage,
    ToolSpec,
    ToolTurn,
    Usage,
)
from tests.contracts import TEST_BACKOFF_BASE, TEST_MAX_RETRIES, TEST_TIMEOUT, ChatHarness
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.http import serve

CONVERSATION = [
    Message(Role.SYSTEM, "You are the Celery guru."),
    Message(Role.USER, "What is a task?"),
    Message(Role.ASSISTANT, "A unit of work."),
    Message(Role.USER, "And a worker?"),
]
SCHEMA = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}


def chat_for(server: FakeGeminiServer, *, api_key: str = FAKE_GEMINI_KEY, model: str = "gemini-2.5-flash",
             thinking_budget: int | None = None) -> GeminiChatModel:
    return GeminiChatModel(api_key=api_key, model=model, base_url=server.url, timeout=TEST_TIMEOUT,
                           max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE,
                           thinking_budget=thinking_budget)


def embedder_for(server: FakeGeminiServer, *, api_key: str = FAKE_GEMINI_KEY, dimension: int = 768,
                 batch_size: int = 100) -> GeminiEmbedder:
    return GeminiEmbedder(api_key=api_key, base_url=server.url, timeout=TEST_TIMEOUT, max_retries=TEST_MAX_RETRIES,
                          backoff_base=TEST_BACKOFF_BASE, dimension=dimension, batch_size=batch_size)


def test_roles_map_to_system_instruction_user_and_model(gemini_chat_harness: ChatHarness) -> None:
    gemini_chat_harness.chat.complete(CONVERSATION, max_tokens=64, flow=Flow.ANSWER)
    sent = gemini_chat_harness.script.requests[-1]
    assert sent.messages == [("system", "You are the Celery guru."), ("user", "What is a task?"),
                             ("assistant", "A unit of work."), ("user", "And a worker?")]
    assert sent.raw["systemInstruction"]["parts"] == [{"text": "You are the Celery guru."}]
    assert [content["role"] for content in sent.raw["contents"]] == ["user", "model", "user"]
    assert sent.max_tokens == 64


def test_several_system_messages_become_one_instruction(gemini_chat_harness: ChatHarness) -> None:
    messages = [Message(Role.SYSTEM, "Rule one."), Message(Role.USER, "Hi"), Message(Role.SYSTEM, "Rule two.")]
    gemini_chat_harness.chat.complete(messages, max_tokens=10, flow=Flow.ANSWER)
    assert gemini_chat_harness.script.requests[-1].messages == [("system", "Rule one.\n\nRule two."), ("user", "Hi")]


def test_json_mode_sends_the_plain_json_schema(gemini_chat_harness: ChatHarness) -> None:
    gemini_chat_harness.script.push(ScriptedReply(json={"intent": "question"}))
    gemini_chat_harness.chat.complete_json(CONVERSATION, schema=SCHEMA, schema_name="u", max_tokens=50,
                                           flow=Flow.UNDERSTAND)
    generation = gemini_chat_harness.script.requests[-1].raw["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseJsonSchema"] == SCHEMA
    assert gemini_chat_harness.script.requests[-1].json_schema == SCHEMA


def test_json_missing_a_required_key_is_retried(gemini_chat_harness: ChatHarness) -> None:
    gemini_chat_harness.script.push(ScriptedReply(json={"other": 1}), ScriptedReply(json={"intent": "question"}))
    result = gemini_chat_harness.chat.complete_json(CONVERSATION, schema=SCHEMA, schema_name="u", max_tokens=50,
                                                    flow=Flow.UNDERSTAND)
    assert result.data == {"intent": "question"}
    assert len(gemini_chat_harness.script.requests) == 2


def test_thinking_budget_is_sent_when_set(gemini_server: FakeGeminiServer) -> None:
    chat_for(gemini_server, thinking_budget=0).complete(CONVERSATION, max_tokens=10, flow=Flow.ANSWER)
    thinking = gemini_server.script.requests[-1].raw["generationConfig"]["thinkingConfig"]
    # The SDK writes this nested key in proto (snake_case) spelling, which Google's JSON parser also accepts.
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 0


def test_cancel_stops_the_stream_and_closes_the_connection(gemini_server: FakeGeminiServer) -> None:
    gemini_server.script.push(ScriptedReply(text="x" * 200, chunks=20, chunk_delay=0.05))
    cancel = CancelToken()
    events = []
    for event in chat_for(gemini_server).stream(CONVERSATION, max_tokens=100, flow=Flow.ANSWER, cancel=cancel):
        events.append(event)
        cancel.cancel()
    assert events == [TextDelta("x" * 10)]
    record = gemini_server.streams[-1]
    assert record.done.wait(timeout=3)
    assert record.client_gone and record.sent_chunks < record.planned_chunks


def test_stream_opening_errors_are_retried(gemini_server: FakeGeminiServer) -> None:
    gemini_server.script.push(ScriptedReply(status=503), ScriptedReply(text="streamed", chunks=2))
    events = list(chat_for(gemini_server).stream(CONVERSATION, max_tokens=10, flow=Flow.ANSWER))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "streamed"
    assert isinstance(events[-1], Usage)
    assert [request.stream for request in gemini_server.script.requests] == [True, True]


def test_wrong_key_is_permanent_and_not_retried(gemini_server: FakeGeminiServer) -> None:
    with pytest.raises(PermanentServiceError, match="rejected the API key"):
        chat_for(gemini_server, api_key="wrong").complete(CONVERSATION, max_tokens=10, flow=Flow.ANSWER)
    with pytest.raises(PermanentServiceError, match="rejected the API key"):
        embedder_for(gemini_server, api_key="wrong").embed_query("hello")
    assert gemini_server.script.requests == [] and gemini_server.embed_script.requests == []


def test_missing_key_fails_without_a_request(gemini_server: FakeGeminiServer) -> None:
    with pytest.raises(PermanentServiceError, match="No Gemini API key"):
        chat_for(gemini_server, api_key="").complete(CONVERSATION, max_tokens=10, flow=Flow.ANSWER)
    assert gemini_server.script.requests == []


def test_unknown_model_is_permanent_and_names_the_model(gemini_server: FakeGeminiServer) -> None:
    gemini_server.script.push(ScriptedReply(status=404))
    with pytest.raises(PermanentServiceError, match="'gemini-nope' not found"):
        chat_for(gemini_server, model="gemini-nope").complete(CONVERSATION, max_tokens=10, flow=Flow.ANSWER)
    assert [request.model for request in gemini_server.script.requests] == ["gemini-nope"]


def test_unreachable_server_is_transient() -> None:
    with serve(lambda request, respond: None) as url:
        closed_url = url
    chat = GeminiChatModel(api_key=FAKE_GEMINI_KEY, base_url=closed_url, timeout=TEST_TIMEOUT, max_retries=1,
                           backoff_base=TEST_BACKOFF_BASE)
    with pytest.raises(TransientServiceError, match="Cannot reach Gemini"):
        chat.complete(CONVERSATION, max_tokens=10, flow=Flow.ANSWER)


def test_documents_and_queries_use_their_task_types(gemini_server: FakeGeminiServer) -> None:
    embedder = embedder_for(gemini_server)
    embedder.embed_documents(["first passage", "second passage"])
    embedder.embed_query("a question")
    documents, query = (request.raw["requests"] for request in gemini_server.embed_script.requests)
    assert [item["taskType"] for item in documents] == ["RETRIEVAL_DOCUMENT"] * 2
    assert [item["taskType"] for item in query] == ["RETRIEVAL_QUERY"]
    assert {item["outputDimensionality"] for item in [*documents, *query]} == {768}
    assert {item["model"] for item in [*documents, *query]} == {"models/gemini-embedding-001"}


def test_documents_are_sent_in_ordered_batches(gemini_server: FakeGeminiServer) -> None:
    texts = [f"passage number {index}" for index in range(8)]
    vectors = embedder_for(gemini_server, batch_size=3, dimension=64).embed_documents(texts)
    batches = [[text for _, text in request.messages] for request in gemini_server.embed_script.requests]
    assert batches == [texts[0:3], texts[3:6], texts[6:8]]
    expected = HashingEmbedder(64, max_input_tokens=2048).embed_documents(texts)
    for vector, wanted in zip(vectors, expected, strict=True):
        assert vector == pytest.approx(wanted, abs=1e-9)


def test_vectors_are_normalised_and_empty_texts_are_not_sent(gemini_server: FakeGeminiServer) -> None:
    vectors = embedder_for(gemini_server, dimension=32).embed_documents(["", "some text", ""])
    assert [math.sqrt(sum(v * v for v in vector)) for vector in vectors] == pytest.approx([1.0] * 3)
    assert [request.messages for request in gemini_server.embed_script.requests] == [[("user", "some text")]]
    assert embedder_for(gemini_server).embed_documents([]) == []
    assert len(gemini_server.embed_script.requests) == 1


def test_embedding_rate_limits_are_retried(gemini_server: FakeGeminiServer) -> None:
    gemini_server.embed_script.push(ScriptedReply(status=429), ScriptedReply(status=500))
    assert len(embedder_for(gemini_server).embed_query("retry me")) == 768
    assert len(gemini_server.embed_script.requests) == 3


def test_embedder_rejects_batches_gemini_would_refuse() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        GeminiEmbedder(api_key=FAKE_GEMINI_KEY, batch_size=101)


def test_concurrent_first_calls_share_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grade and the answer start side by side on a new model: a second client would close the first's calls."""
    client = GeminiClient(api_key=FAKE_GEMINI_KEY, base_url="http://127.0.0.1:9", timeout=5)
    build, together = client._build, threading.Barrier(2, timeout=1)

    def build_when_both_arrive() -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):  # fixed: the other caller waits on the lock
            together.wait()
        return build()

    monkeypatch.setattr(client, "_build", build_when_both_arrive)
    got: list[Any] = []
    callers = [threading.Thread(target=lambda: got.append(client.get())) for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(got) == 2 and got[0] is got[1]


SEARCH = ToolSpec("search", "Search the guru's sources.",
                  {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
SUMMARY = ToolSpec("summary", "The guru's summary.", {"type": "object", "properties": {}})
ASK = [ToolMessage(Role.SYSTEM, "Answer from the tools' results."), ToolMessage(Role.USER, "Compare A and B.")]


def answer_calls(turn: ToolTurn) -> list[ToolMessage]:
    """The question, the assistant turn that made `turn`'s calls, and one result per call."""
    results = [ToolMessage(Role.TOOL, f"[{n}] {call.name} result", call_id=call.id, name=call.name)
               for n, call in enumerate(turn.calls, start=1)]
    return [*ASK, ToolMessage(Role.ASSISTANT, turn.text, calls=turn.calls), *results]


def wire_signature(issued: str) -> str:
    """Gemini sends thought signatures in standard base64; the SDK echoes them URL-safe."""
    return issued.replace("+", "-").replace("/", "_")


def test_the_next_step_replays_the_calls_with_their_signature_then_the_results(
        gemini_server: FakeGeminiServer) -> None:
    gemini_server.script.push(ScriptedReply(text="Let me look.", tool_calls=(("search", {"query": "A"}),
                                                                             ("summary", {}))))
    chat = chat_for(gemini_server)
    first = chat.complete_tools(ASK, [SEARCH, SUMMARY], max_tokens=300, flow=Flow.AGENT)
    assert first.text == "Let me look."
    search, summary = first.calls
    chat.complete_tools(answer_calls(first), [SEARCH, SUMMARY], max_tokens=300, flow=Flow.AGENT)
    assert gemini_server.script.requests[-1].raw["contents"] == [
        {"role": "user", "parts": [{"text": "Compare A and B."}]},
        {"role": "model", "parts": [
            {"text": "Let me look."},
            {"functionCall": {"id": search.id, "name": "search", "args": {"query": "A"}},
             "thoughtSignature": wire_signature(gemini_server.signatures[-1])},
            {"functionCall": {"id": summary.id, "name": "summary", "args": {}}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": search.id, "name": "search", "response": {"result": "[1] search result"}}},
            {"functionResponse": {"id": summary.id, "name": "summary",
                                  "response": {"result": "[2] summary result"}}},
        ]},
    ]


def test_tools_are_declared_as_functions_and_the_sdk_never_runs_them(
        gemini_server: FakeGeminiServer, caplog: pytest.LogCaptureFixture) -> None:
    gemini_server.script.push(ScriptedReply(tool_calls=(("search", {"query": "A"}),)))
    with caplog.at_level(logging.INFO, logger="google_genai"):
        turn = chat_for(gemini_server).complete_tools(ASK, [SEARCH], max_tokens=300, flow=Flow.AGENT)
    assert [(call.name, call.arguments) for call in turn.calls] == [("search", {"query": "A"})]
    # Automatic function calling is off: one request, the call comes back to us, and the SDK never logs AFC.
    assert len(gemini_server.script.requests) == 1
    assert not [record for record in caplog.records if "AFC" in record.getMessage()]
    [declaration] = gemini_server.script.requests[-1].raw["tools"][0]["functionDeclarations"]
    # Like thinkingConfig, the SDK writes this nested key in proto spelling, which Google's JSON parser accepts.
    assert declaration == {"name": "search", "description": "Search the guru's sources.",
                           "parameters_json_schema": SEARCH.parameters}


def test_a_step_without_tools_declares_none(gemini_server: FakeGeminiServer) -> None:
    turn = chat_for(gemini_server).complete_tools(ASK, [], max_tokens=300, flow=Flow.AGENT)
    assert (turn.text, turn.calls) == ("ok", ())
    assert "tools" not in gemini_server.script.requests[-1].raw


def test_calls_without_ids_get_made_up_ids_that_pair_their_results(gemini_server: FakeGeminiServer) -> None:
    gemini_server.call_ids = False  # as Gemini 2.5, which gives function calls no id
    gemini_server.script.push(ScriptedReply(tool_calls=(("search", {"query": "A"}), ("search", {"query": "B"}))),
                              ScriptedReply(tool_calls=(("search", {"query": "C"}),)))
    chat = chat_for(gemini_server)
    first = chat.complete_tools(ASK, [SEARCH], max_tokens=300, flow=Flow.AGENT)
    again = chat.complete_tools(ASK, [SEARCH], max_tokens=300, flow=Flow.AGENT)
    ids = [call.id for call in [*first.calls, *again.calls]]
    assert all(call_id.startswith("call_") for call_id in ids) and len(set(ids)) == 3
    chat.complete_tools(answer_calls(first), [SEARCH], max_tokens=300, flow=Flow.AGENT)
    sent = gemini_server.script.requests[-1]
    replayed = [part["functionCall"] for part in sent.raw["contents"][1]["parts"] if "functionCall" in part]
    assert [call["id"] for call in replayed] == ids[:2]
    assert sent.tool_results == [(ids[0], "search", "[1] search result"), (ids[1], "search", "[2] search result")]


def test_a_call_whose_signature_is_unknown_is_replayed_with_the_skip_signature(
        gemini_server: FakeGeminiServer) -> None:
    """A step this process did not make (or whose signature it dropped) would get Gemini 3's 400 unsigned."""
    made_elsewhere = ToolTurn(text="", calls=(ToolCall("call_9", "search", {"query": "A"}),),
                              usage=Usage(model="gemini-2.5-flash", flow=Flow.AGENT))
    chat_for(gemini_server).complete_tools(answer_calls(made_elsewhere), [SEARCH], max_tokens=300, flow=Flow.AGENT)
    [part] = gemini_server.script.requests[-1].raw["contents"][1]["parts"]
    assert part["thoughtSignature"] == "skip_thought_signature_validator"


def test_a_malformed_call_is_sampled_again(gemini_server: FakeGeminiServer) -> None:
    """Gemini cannot send arguments that are not an object: it ends with MALFORMED_FUNCTION_CALL and no part."""
    gemini_server.script.push(ScriptedReply(tool_calls=(("search", "{not json"),)),
                              ScriptedReply(tool_calls=(("search", {"query": "A"}),)))
    turn = chat_for(gemini_server).complete_tools(ASK, [SEARCH], max_tokens=300, flow=Flow.AGENT)
    assert [(call.name, call.arguments) for call in turn.calls] == [("search", {"query": "A"})]
    assert len(gemini_server.script.requests) == 2
    gemini_server.script.push(*[ScriptedReply(tool_calls=(("search", "{not json"),))] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError, match="MALFORMED_FUNCTION_CALL"):
        chat_for(gemini_server).complete_tools(ASK, [SEARCH], max_tokens=300, flow=Flow.AGENT)
