"""The agentic research loop with a scripted model: calls run and are reported, passages are numbered once across
tool results, a failing tool or invalid arguments are told to the model, and every bound stops the loop."""

from __future__ import annotations

from collections.abc import Sequence

from backend.adapters.llm.fake import ScriptedChatModel, ScriptedReply
from backend.pipeline.agent import AgentLimits, AgentResult, AgentStep, ToolFailed, ToolOutput, research
from backend.pipeline.contexts import Context
from backend.pipeline.errors import TransientServiceError
from backend.pipeline.llm_types import CancelToken, Role, ToolCall, ToolMessage, ToolSpec
from backend.pipeline.types import SourceKind

TOOLS = [ToolSpec("search", "Search.", {"type": "object", "properties": {"query": {"type": "string"}}}),
         ToolSpec("open_source", "Open.", {"type": "object", "properties": {"document": {"type": "string"}}})]
ASK = [ToolMessage(Role.SYSTEM, "Research, then stop."), ToolMessage(Role.USER, "Compare retries and acks.")]


def page(title: str, text: str, chunk: str) -> Context:
    return Context(source_id=1, kind=SourceKind.PDF, title=title, link="", text=text, score=0.5, locator="",
                   chunk_ids=(chunk,), document=f"1:{title}")


PAGES = {"retries": page("Retries", "self.retry() retries a task.", "c1"),
         "acks": page("Acks", "acks_late acknowledges after the task ran.", "c2")}


def runner(call: ToolCall, read: Sequence[Context]) -> ToolOutput:
    if call.name == "search":
        query = str(call.arguments.get("query", ""))
        found = tuple(p for name, p in PAGES.items() if name in query)
        return ToolOutput(contexts=found)
    raise ToolFailed(f"no document named {call.arguments.get('document')!r}")


def run(chat: ScriptedChatModel, **kwargs: object) -> tuple[list[AgentStep], AgentResult]:
    events = list(research(chat, ASK, TOOLS, runner, **kwargs))  # type: ignore[arg-type]
    result = events[-1]
    assert isinstance(result, AgentResult)
    return [e for e in events if isinstance(e, AgentStep)], result


def test_calls_run_in_order_are_reported_and_passages_are_numbered_once() -> None:
    chat = ScriptedChatModel()
    chat.script.push(ScriptedReply(tool_calls=(("search", {"query": "retries"}), ("search", {"query": "acks"}))),
                     ScriptedReply(tool_calls=(("search", {"query": "retries and acks"}),)),
                     ScriptedReply(text="Done."))
    steps, result = run(chat)
    assert [(s.call.arguments["query"], s.ok) for s in steps] == [
        ("retries", None), ("retries", True), ("acks", None), ("acks", True),
        ("retries and acks", None), ("retries and acks", True)]
    assert [c.title for c in result.contexts] == ["Retries", "Acks"], "read twice, numbered once"
    assert (result.steps, result.calls, result.stopped) == (3, 3, "done")
    third = chat.script.requests[2]
    # The model reads each result under the number it will cite; the second search repeats [1] and [2].
    assert third.tool_results[-1][2] == "[1] Retries\nself.retry() retries a task.\n\n[2] Acks\n" \
                                        "acks_late acknowledges after the task ran."
    assert third.tool_results[0][1:] == ("search", "[1] Retries\nself.retry() retries a task.")


def test_a_failing_tool_and_invalid_arguments_are_told_to_the_model() -> None:
    chat = ScriptedChatModel()
    chat.script.push(ScriptedReply(tool_calls=(("open_source", {"document": "nope"}), ("search", "{bad"))),
                     ScriptedReply(text="Done."))
    steps, result = run(chat)
    assert [s.ok for s in steps if s.ok is not None] == [False, False]
    sent = chat.script.requests[1].tool_results
    assert sent[0][2] == "Error: no document named 'nope'" and "not a JSON object" in sent[1][2]
    assert result.contexts == [] and result.stopped == "done"


def test_a_model_that_never_stops_is_stopped_by_the_step_and_call_bounds() -> None:
    chat = ScriptedChatModel()
    chat.script.push(*[ScriptedReply(tool_calls=(("search", {"query": "retries"}),))] * 10)
    _, result = run(chat, limits=AgentLimits(max_steps=3))
    assert (result.steps, result.calls, result.stopped) == (3, 3, "steps")
    chat = ScriptedChatModel()
    chat.script.push(ScriptedReply(tool_calls=tuple(("search", {"query": "acks"}) for _ in range(5))))
    steps, result = run(chat, limits=AgentLimits(max_calls=2))
    assert (result.calls, result.stopped, len(steps)) == (2, "calls", 4)


def test_tokens_and_cancel_stop_the_loop() -> None:
    chat = ScriptedChatModel()
    chat.script.push(*[ScriptedReply(tool_calls=(("search", {"query": "acks"}),), prompt_tokens=900)] * 5)
    _, result = run(chat, limits=AgentLimits(max_tokens=2000))
    assert (result.steps, result.stopped) == (3, "tokens")
    cancel = CancelToken()
    chat = ScriptedChatModel()
    chat.script.push(ScriptedReply(tool_calls=(("search", {"query": "acks"}), ("search", {"query": "retries"}))))
    events = research(chat, ASK, TOOLS, runner, cancel=cancel)
    first = next(events)
    assert isinstance(first, AgentStep) and first.ok is None
    cancel.cancel()
    rest = list(events)
    assert isinstance(rest[-1], AgentResult) and rest[-1].stopped == "cancelled" and rest[-1].calls == 1


def test_a_model_error_is_not_swallowed() -> None:
    chat = ScriptedChatModel()
    chat.script.push(ScriptedReply(status=503))
    try:
        run(chat)
    except TransientServiceError:
        return
    raise AssertionError("a provider error reaches the caller, which falls back to the simple path")
