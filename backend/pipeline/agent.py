"""The agentic path's research loop: the model calls the guru's tools in a bounded number of steps, each call is
reported as it starts and ends, and every passage a tool returns is numbered once, so the answer written from
them cites [n] over everything the model read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from backend.pipeline.contexts import Context
from backend.pipeline.errors import ServiceError
from backend.pipeline.llm_types import CancelToken, Flow, Role, ToolCall, ToolMessage, ToolSpec, Usage
from backend.pipeline.ports import ChatModel

MAX_RESULT_CHARS = 4000
"""A tool result as the model reads it, at most: the passages' numbered excerpts."""
PASSAGE_CHARS = 1200
STEP_TOKENS = 600


class ToolFailed(Exception):
    """A tool could not do what was asked (bad arguments, nothing to open): the model is told why and goes on."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returned: passages (numbered for citation) and/or a note for the model (a list, a summary)."""

    contexts: tuple[Context, ...] = ()
    note: str = ""


ToolRunner = Callable[[ToolCall, Sequence[Context]], ToolOutput]
"""Runs one call; it is given the passages read so far, numbered from 1, so a tool can take "passage [n]"."""


@dataclass(frozen=True)
class AgentLimits:
    """Bounds of one research loop: model steps, tool calls, seconds and tokens (prompt + completion)."""

    max_steps: int = 4
    max_calls: int = 8
    max_seconds: float = 45.0
    max_tokens: int = 24_000


@dataclass(frozen=True)
class AgentStep:
    """A tool call as the asker sees it: started (ok None) or ended (ok True/False) with a one-line summary."""

    call: ToolCall
    ok: bool | None
    summary: str = ""


@dataclass
class AgentResult:
    """Everything the model read, numbered in order of first appearance, and why the loop stopped."""

    contexts: list[Context] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    steps: int = 0
    calls: int = 0
    stopped: str = ""
    """done (the model stopped calling tools), steps, calls, time, tokens or cancelled."""

    @property
    def tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens for u in self.usage)


def _key(context: Context) -> tuple[object, ...]:
    return (context.document, context.chunk_ids) if context.chunk_ids else (context.document, context.text)


def _record(result: AgentResult, output: ToolOutput) -> str:
    """Number the output's new passages (a passage read twice keeps its number) and render what the model reads."""
    known = {_key(c): n for n, c in enumerate(result.contexts, start=1)}
    lines = [output.note] if output.note else []
    for context in output.contexts:
        number = known.get(_key(context))
        if number is None:
            result.contexts.append(context)
            number = known[_key(context)] = len(result.contexts)
        lines.append(f"[{number}] {context.title}\n{context.text[:PASSAGE_CHARS]}")
    text = "\n\n".join(lines) or "Nothing found."
    return text[:MAX_RESULT_CHARS]


def _run(run_tool: ToolRunner, call: ToolCall, result: AgentResult) -> tuple[str, bool]:
    """The call's result text for the model, and whether the tool did its work."""
    if call.invalid:
        return f"Error: the arguments of {call.name} were not a JSON object.", False
    try:
        return _record(result, run_tool(call, tuple(result.contexts))), True
    except ToolFailed as exc:
        return f"Error: {exc}", False
    except ServiceError as exc:
        return f"Error: {call.name} is unavailable now ({exc}).", False


def _stop(result: AgentResult, limits: AgentLimits, started: float, cancel: CancelToken | None) -> str:
    if cancel is not None and cancel.cancelled:
        return "cancelled"
    if result.steps >= limits.max_steps:
        return "steps"
    if time.monotonic() - started > limits.max_seconds:
        return "time"
    return "tokens" if result.tokens >= limits.max_tokens else ""


def research(chat: ChatModel, messages: Sequence[ToolMessage], tools: Sequence[ToolSpec], run_tool: ToolRunner, *,
             limits: AgentLimits | None = None, cancel: CancelToken | None = None,
             ) -> Iterator[AgentStep | AgentResult]:
    """Let the model call tools until it stops or a bound is reached; yields each call as it starts and ends, then
    the AgentResult (last). A failing tool is reported to the model, which may try another way."""
    bounds, result, started = limits or AgentLimits(), AgentResult(), time.monotonic()
    conversation = list(messages)
    while not (stopped := _stop(result, bounds, started, cancel)):
        turn = chat.complete_tools(conversation, tools, max_tokens=STEP_TOKENS, flow=Flow.AGENT)
        result.usage.append(turn.usage)
        result.steps += 1
        if not turn.calls:
            stopped = "done"
            break
        calls = turn.calls[: max(0, bounds.max_calls - result.calls)]
        conversation.append(ToolMessage(Role.ASSISTANT, turn.text, calls=calls))
        for call in calls:
            if cancel is not None and cancel.cancelled:
                break
            yield AgentStep(call, None)
            text, ok = _run(run_tool, call, result)
            result.calls += 1
            conversation.append(ToolMessage(Role.TOOL, text, call_id=call.id, name=call.name))
            yield AgentStep(call, ok, text.split("\n", 1)[0][:200])
        if len(calls) < len(turn.calls) or result.calls >= bounds.max_calls:
            stopped = "calls"
            break
    result.stopped = stopped
    yield result
