"""Tool calls in the OpenAI chat completions wire format: offered tools, conversation turns, and the calls read back."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from backend.pipeline.llm_types import Role, ToolCall, ToolMessage, ToolSpec

logger = logging.getLogger(__name__)


def wire_tools(tools: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    """The `tools` array; not `strict`, since strict mode rejects schemas with optional properties."""
    return [{"type": "function",
             "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}
            for tool in tools]


def wire_tool_messages(messages: Sequence[ToolMessage]) -> list[ChatCompletionMessageParam]:
    return [_wire_tool_message(message) for message in messages]


def _wire_tool_message(message: ToolMessage) -> ChatCompletionMessageParam:
    if message.role == Role.SYSTEM:
        return {"role": "system", "content": message.content}
    if message.role == Role.USER:
        return {"role": "user", "content": message.content}
    if message.role == Role.TOOL:
        # The wire tool message has no `name`: the id alone pairs the result with its call.
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
    if not message.calls:
        return {"role": "assistant", "content": message.content}
    # null, not "", is what the API itself returns beside calls, so a turn goes back exactly as it came.
    return {"role": "assistant", "content": message.content or None,
            "tool_calls": [_wire_call(call) for call in message.calls]}


def _wire_call(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    # Invalid arguments go back verbatim: the model should see what it really sent when told it was wrong.
    arguments = call.invalid or json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def read_tool_calls(message: ChatCompletionMessage) -> tuple[ToolCall, ...]:
    """The function calls of a reply; an id is made up where a compatible server sends none (or repeats one)."""
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for n, call in enumerate(message.tool_calls or (), start=1):
        # The SDK does not validate replies, so a compatible server's odd shapes are checked by hand.
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            logger.warning("openai tool call without a function name ignored: %r", call)
            continue
        call_id = getattr(call, "id", None)
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = _fresh_id(n, seen)
        seen.add(call_id)
        calls.append(_tool_call(call_id, name, getattr(function, "arguments", None)))
    return tuple(calls)


def _fresh_id(n: int, seen: set[str]) -> str:
    call_id = f"call_{n}"
    while call_id in seen:
        call_id += "_"
    return call_id


def _tool_call(call_id: str, name: str, raw: Any) -> ToolCall:
    if isinstance(raw, dict):  # some compatible servers send the object itself, not its JSON text
        return ToolCall(id=call_id, name=name, arguments=raw)
    text = raw if isinstance(raw, str) else ""
    if not text.strip():
        # Compatible servers send "" (or nothing) for a tool that takes no arguments.
        return ToolCall(id=call_id, name=name, arguments={})
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, arguments={}, invalid=text)
    return ToolCall(id=call_id, name=name, arguments=arguments)
