"""Gemini-only behaviour, seen from the fake server: roles, schema, task types, batching, cancel, key errors."""

from __future__ import annotations

import contextlib
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
from backend.pipeline.llm_types import CancelToken, Flow, Message, Role, TextDelta, Usage
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
