"""One contract for every ChatModel: the in-memory fake and each real SDK against its fake server."""

from __future__ import annotations

import pytest

from backend.adapters.llm.fake import ScriptedReply
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import CancelToken, Flow, Message, Role, TextDelta, Usage
from tests.contracts import TEST_MAX_RETRIES, ChatHarness

MESSAGES = [Message(Role.SYSTEM, "You are the Celery guru."), Message(Role.USER, "What is a task?")]
SCHEMA = {
    "type": "object",
    "properties": {"intent": {"type": "string"}, "in_scope": {"type": "boolean"}},
    "required": ["intent", "in_scope"],
    "additionalProperties": False,
}


def test_complete_returns_text_usage_and_sends_the_messages(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(text="A task is a unit of work.", prompt_tokens=21, completion_tokens=9))
    completion = harness.chat.complete(MESSAGES, max_tokens=100, flow=Flow.ANSWER)
    assert completion.text == "A task is a unit of work."
    assert completion.usage == Usage(model=harness.chat.model, flow=Flow.ANSWER, prompt_tokens=21,
                                     completion_tokens=9, cached_prompt_tokens=completion.usage.cached_prompt_tokens)
    sent = harness.script.requests[-1]
    assert sent.messages == [("system", "You are the Celery guru."), ("user", "What is a task?")]
    assert sent.model == harness.chat.model and not sent.stream


def test_complete_json_returns_the_object_and_sends_the_schema(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(json={"intent": "question", "in_scope": True}))
    result = harness.chat.complete_json(MESSAGES, schema=SCHEMA, schema_name="understanding", max_tokens=50,
                                        flow=Flow.UNDERSTAND)
    assert result.data == {"intent": "question", "in_scope": True}
    assert result.usage.flow is Flow.UNDERSTAND
    assert harness.script.requests[-1].json_schema is not None


def test_invalid_json_is_a_transient_error(harness: ChatHarness) -> None:
    harness.script.push(*[ScriptedReply(text="not json {")] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError):
        harness.chat.complete_json(MESSAGES, schema=SCHEMA, schema_name="u", max_tokens=50, flow=Flow.UNDERSTAND)


def test_stream_yields_deltas_then_one_usage(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(text="Tasks run in workers, retried on failure.", chunks=4,
                                      completion_tokens=8))
    events = list(harness.chat.stream(MESSAGES, max_tokens=100, flow=Flow.ANSWER))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2
    assert "".join(d.text for d in deltas) == "Tasks run in workers, retried on failure."
    assert isinstance(events[-1], Usage) and events[-1].completion_tokens == 8
    assert sum(isinstance(e, Usage) for e in events) == 1
    assert harness.script.requests[-1].stream


def test_stream_stops_soon_after_cancel(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(text="x" * 200, chunks=20, chunk_delay=0.05))
    cancel = CancelToken()
    received = []
    for event in harness.chat.stream(MESSAGES, max_tokens=100, flow=Flow.ANSWER, cancel=cancel):
        received.append(event)
        cancel.cancel()
    assert len(received) < 5  # of 20 chunks
    assert not any(isinstance(e, Usage) for e in received)


def test_rate_limits_and_server_errors_are_retried(harness: ChatHarness) -> None:
    if not harness.over_http:
        pytest.skip("retries belong to HTTP adapters")
    harness.script.push(ScriptedReply(status=429), ScriptedReply(status=503), ScriptedReply(text="finally"))
    assert harness.chat.complete(MESSAGES, max_tokens=10, flow=Flow.ANSWER).text == "finally"
    assert len(harness.script.requests) == 3


def test_persistent_server_errors_become_transient_errors(harness: ChatHarness) -> None:
    harness.script.push(*[ScriptedReply(status=500)] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError):
        harness.chat.complete(MESSAGES, max_tokens=10, flow=Flow.ANSWER)


def test_bad_credentials_are_permanent_and_not_retried(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(status=401))
    with pytest.raises(PermanentServiceError):
        harness.chat.complete(MESSAGES, max_tokens=10, flow=Flow.ANSWER)
    assert len(harness.script.requests) == 1


def test_a_hanging_provider_times_out(harness: ChatHarness) -> None:
    if not harness.over_http:
        pytest.skip("timeouts belong to HTTP adapters")
    # Each reply would arrive after 5 s; the adapter's 2 s timeout must give up first.
    harness.script.push(*[ScriptedReply(delay=5.0)] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError):
        harness.chat.complete(MESSAGES, max_tokens=10, flow=Flow.ANSWER)
