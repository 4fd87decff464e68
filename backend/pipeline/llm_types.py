"""Typed values for chat models, rerankers and the answerer: messages, usage, stream events."""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Any


class Role(str, enum.Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    """A tool's result, sent back to the model (only in ToolMessage conversations)."""


class Flow(str, enum.Enum):
    """Why a model was called; tags logs and usage so cost can be split per stage."""

    UNDERSTAND = "understand"
    GRADE = "grade"
    ANSWER = "answer"
    SUMMARIZE = "summarize"
    RERANK = "rerank"
    EMBED = "embed"
    JUDGE = "judge"
    MEMORY = "memory"
    AGENT = "agent"


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class Usage:
    """Tokens one call consumed; `model` is the provider's model id."""

    model: str
    flow: Flow
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage


@dataclass(frozen=True)
class JsonCompletion:
    """A structured answer that validated against the requested JSON schema's required keys."""

    data: dict[str, Any]
    usage: Usage


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text."""

    text: str


StreamEvent = TextDelta | Usage
"""A stream yields TextDelta events, then exactly one Usage when it completes."""


@dataclass
class CancelToken:
    """Set by the consumer (e.g. the client disconnected); a stream checks it between chunks."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class Passage:
    """A candidate for reranking. `vector` is the stored dense vector, so no re-embedding is needed."""

    text: str
    title: str = ""
    vector: tuple[float, ...] | None = None
    first_stage_score: float | None = None


@dataclass(frozen=True)
class RerankResult:
    """A passage's index in the request and its relevance in [0, 1]; `selection`, when a reranker gives one,
    decides which documents make the cut instead (see LocalFusionReranker's relevance feedback), while `score`
    stays the grade every threshold and the trust step read."""

    index: int
    score: float
    selection: float | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and its arguments as a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. `id` pairs it with its result (providers without ids get one made up).
    `invalid` holds the raw arguments when they were not a JSON object (then `arguments` is empty)."""

    id: str
    name: str
    arguments: dict[str, Any]
    invalid: str = ""


@dataclass(frozen=True)
class ToolMessage:
    """A turn of a conversation with tools: system, user, an assistant turn with the calls it made, or (role
    TOOL) one call's result, naming the call (`call_id`) and the tool (`name`)."""

    role: Role
    content: str
    calls: tuple[ToolCall, ...] = ()
    call_id: str = ""
    name: str = ""


@dataclass(frozen=True)
class ToolTurn:
    """One step of the model: its text (often empty) and the tools it calls; no calls means it is done."""

    text: str
    calls: tuple[ToolCall, ...]
    usage: Usage
