"""One contract for tool calls on every ChatModel: the in-memory fake and each real SDK (OpenAI, Gemini) against
its fake server on 127.0.0.1, which speaks the provider's own format for offered tools, calls and results."""

from __future__ import annotations

import pytest

from backend.adapters.llm.fake import ScriptedReply
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import Flow, Role, ToolMessage, ToolSpec
from tests.contracts import TEST_MAX_RETRIES, ChatHarness

SEARCH = ToolSpec("search", "Search the guru's sources.", {
    "type": "object", "properties": {"query": {"type": "string"}, "kind": {"type": "string"}},
    "required": ["query"]})
SUMMARY = ToolSpec("summary", "The guru's summary.", {"type": "object", "properties": {}})
TOOLS = [SEARCH, SUMMARY]
ASK = [ToolMessage(Role.SYSTEM, "Answer from the tools' results."), ToolMessage(Role.USER, "Compare A and B.")]


def test_a_step_returns_the_calls_the_model_makes_and_offers_the_tools(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(tool_calls=(("search", {"query": "A", "kind": "PDF"}), ("summary", {})),
                                      prompt_tokens=30, completion_tokens=12))
    turn = harness.chat.complete_tools(ASK, TOOLS, max_tokens=300, flow=Flow.AGENT)
    assert [(c.name, c.arguments, c.invalid) for c in turn.calls] == [("search", {"query": "A", "kind": "PDF"}, ""),
                                                                      ("summary", {}, "")]
    assert len({c.id for c in turn.calls}) == 2 and all(c.id for c in turn.calls)
    assert (turn.usage.flow, turn.usage.prompt_tokens, turn.usage.completion_tokens) == (Flow.AGENT, 30, 12)
    sent = harness.script.requests[-1]
    assert sent.tools == ["search", "summary"] and not sent.stream
    assert sent.messages[-1] == ("user", "Compare A and B.")


def test_results_go_back_paired_with_their_calls_and_the_model_then_answers(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(tool_calls=(("search", {"query": "A"}), ("search", {"query": "B"}))),
                        ScriptedReply(text="A is faster than B [1][2]."))
    first = harness.chat.complete_tools(ASK, TOOLS, max_tokens=300, flow=Flow.AGENT)
    conversation = [*ASK, ToolMessage(Role.ASSISTANT, first.text, calls=first.calls),
                    *(ToolMessage(Role.TOOL, f"[{n}] result for {c.arguments['query']}", call_id=c.id, name=c.name)
                      for n, c in enumerate(first.calls, start=1))]
    second = harness.chat.complete_tools(conversation, TOOLS, max_tokens=300, flow=Flow.AGENT)
    assert (second.text, second.calls) == ("A is faster than B [1][2].", ())
    sent = harness.script.requests[-1]
    assert sent.tool_results == [(first.calls[0].id, "search", "[1] result for A"),
                                 (first.calls[1].id, "search", "[2] result for B")]


def test_arguments_that_are_not_a_json_object_are_kept_raw(harness: ChatHarness,
                                                           request: pytest.FixtureRequest) -> None:
    if "gemini" in request.node.name:
        # Gemini's wire carries arguments only as an object: a malformed call ends the reply with
        # MALFORMED_FUNCTION_CALL and no parts, which the adapter retries (test_gemini_specifics.py).
        pytest.skip("not applicable to Gemini: its calls' arguments are always an object")
    harness.script.push(ScriptedReply(tool_calls=(("search", "{not json"),)))
    [call] = harness.chat.complete_tools(ASK, TOOLS, max_tokens=300, flow=Flow.AGENT).calls
    assert (call.name, call.arguments) == ("search", {}) and call.invalid


def test_errors_are_classified_as_for_every_other_call(harness: ChatHarness) -> None:
    harness.script.push(ScriptedReply(status=401))
    with pytest.raises(PermanentServiceError):
        harness.chat.complete_tools(ASK, TOOLS, max_tokens=300, flow=Flow.AGENT)
    harness.script.push(*[ScriptedReply(status=503)] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError):
        harness.chat.complete_tools(ASK, TOOLS, max_tokens=300, flow=Flow.AGENT)
