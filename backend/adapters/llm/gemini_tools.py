"""Gemini function calling: tool declarations, ToolMessages as contents, and reading the calls of a response."""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from google.genai import types

from backend.pipeline.errors import TransientServiceError
from backend.pipeline.llm_types import Role, ToolCall, ToolMessage, ToolSpec

# Google's documented stand-in for a thought signature on a function call the model did not sign (one
# whose signature we no longer hold, e.g. evicted or made by another process); Gemini 3 rejects unsigned steps.
# The SDK sends bytes as URL-safe base64, so these bytes go on the wire as exactly that documented string.
SKIP_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")
# Gemini's wire has no way to carry arguments that are not an object: it ends such an answer with one of these and
# no part, quoting the raw call only in finishMessage, which the SDK drops. Sampling again usually succeeds.
_UNUSABLE_CALL_REASONS = frozenset({types.FinishReason.MALFORMED_FUNCTION_CALL,
                                    types.FinishReason.UNEXPECTED_TOOL_CALL})
_SIGNATURES_KEPT = 512


class SignatureStore:
    """Thought signatures of recent function calls, so a replayed call carries the one Gemini gave it.

    ToolCall has no room for them, and Gemini 3 answers 400 when the first call of a step comes back unsigned.
    Bounded (oldest dropped first) and thread-safe: one chat model serves concurrent conversations.
    """

    def __init__(self, capacity: int = _SIGNATURES_KEPT) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def remember(self, signatures: Mapping[str, bytes]) -> None:
        with self._lock:
            self._items.update(signatures)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            return self._items.get(key)


def signature_key(call: ToolCall) -> str:
    """The call's id, name and arguments: ids Gemini makes up need not be unique across conversations."""
    return json.dumps([call.id, call.name, call.arguments], sort_keys=True, default=str)


def function_tools(tools: Sequence[ToolSpec]) -> types.ToolListUnion | None:
    """One Tool declaring every function; its parameters go as plain JSON Schema (not Google's OpenAPI subset)."""
    if not tools:
        return None
    declarations = [types.FunctionDeclaration(name=tool.name, description=tool.description,
                                              parameters_json_schema=tool.parameters) for tool in tools]
    return [types.Tool(function_declarations=declarations)]


def to_tool_contents(messages: Sequence[ToolMessage], signatures: SignatureStore
                     ) -> tuple[str | None, list[types.Content]]:
    """(system instruction, conversation): assistant turns become "model" contents holding their function calls,
    and consecutive tool results one "user" content of function responses, as Gemini pairs them per step."""
    system = [m.content for m in messages if Role(m.role) is Role.SYSTEM]
    contents: list[types.Content] = []
    for message in messages:
        role = Role(message.role)
        if role is Role.TOOL:
            _add_result(contents, message)
        elif role is Role.ASSISTANT:
            contents.append(types.Content(role="model", parts=_model_parts(message, signatures)))
        elif role is Role.USER:
            contents.append(types.Content(role="user", parts=[types.Part(text=message.content)]))
    if not contents:
        raise ValueError("Gemini needs at least one user or assistant message besides the system instruction")
    return "\n\n".join(system) or None, contents


def _model_parts(message: ToolMessage, signatures: SignatureStore) -> list[types.Part]:
    parts = [types.Part(text=message.content)] if message.content or not message.calls else []
    for index, call in enumerate(message.calls):
        signature = signatures.get(signature_key(call))
        if signature is None and index == 0:
            # Gemini signs only the first call of a step, and Gemini 3 checks exactly that one.
            signature = SKIP_SIGNATURE
        function_call = types.FunctionCall(id=call.id or None, name=call.name, args=call.arguments)
        parts.append(types.Part(function_call=function_call, thought_signature=signature))
    return parts


def _add_result(contents: list[types.Content], message: ToolMessage) -> None:
    response = types.FunctionResponse(id=message.call_id or None, name=message.name,
                                      response={"result": message.content})
    part = types.Part(function_response=response)
    last = contents[-1] if contents else None
    if last is not None and last.role == "user" and last.parts and last.parts[-1].function_response is not None:
        last.parts.append(part)
    else:
        contents.append(types.Content(role="user", parts=[part]))


def read_tool_calls(response: types.GenerateContentResponse) -> tuple[tuple[ToolCall, ...], dict[str, bytes]]:
    """The calls of the first candidate and the thought signatures to keep for them (by `signature_key`).

    Calls without an id (Gemini 2.5 gives none) get one made up, unique within the turn and across turns. A
    malformed or undeclared call is a TransientServiceError, so the step is retried.
    """
    candidate = response.candidates[0] if response.candidates else None
    if candidate is None:
        return (), {}
    parts = candidate.content.parts if candidate.content is not None else None
    prefix = f"call_{secrets.token_hex(4)}_"
    calls: list[ToolCall] = []
    signatures: dict[str, bytes] = {}
    seen: set[str] = set()
    for part in parts or []:
        if part.function_call is None:
            continue
        function_call = part.function_call
        call_id = function_call.id if function_call.id and function_call.id not in seen else ""
        call = ToolCall(id=call_id or f"{prefix}{len(calls) + 1}", name=function_call.name or "",
                        arguments=dict(function_call.args or {}))
        seen.add(call.id)
        calls.append(call)
        if part.thought_signature:
            signatures[signature_key(call)] = part.thought_signature
    if not calls and candidate.finish_reason in _UNUSABLE_CALL_REASONS:
        reason = getattr(candidate.finish_reason, "value", candidate.finish_reason)
        raise TransientServiceError(f"Gemini made a function call it could not express ({reason})")
    return tuple(calls), signatures
