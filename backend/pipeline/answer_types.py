"""Typed inputs and outputs of the answerer's task-level calls (understand, grade, answer, summarise)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Intent(str, enum.Enum):
    QUESTION = "question"
    GREETING = "greeting"
    CHITCHAT = "chitchat"
    INVALID = "invalid"


class AnswerLength(str, enum.Enum):
    SHORT = "short"
    MEDIUM = "medium"
    LONG = "long"


@dataclass(frozen=True)
class Turn:
    """One earlier exchange of the conversation."""

    question: str
    answer: str


@dataclass(frozen=True)
class UnderstandRequest:
    question: str
    guru_name: str
    domain: str
    history: tuple[Turn, ...] = ()


@dataclass(frozen=True)
class Understanding:
    """What the question is and how to search for it; `in_scope` is None when undecided."""

    prettified: str
    slug: str
    intent: Intent
    answer_length: AnswerLength
    retrieval_query: str
    in_scope: bool | None = None
    reply: str = ""
    """A direct reply for greetings and chit-chat (no retrieval)."""


@dataclass(frozen=True)
class GradeInput:
    """A context to grade; `prior` is the reranker's score in [0, 1]."""

    context_id: int
    text: str
    prior: float


@dataclass(frozen=True)
class Grade:
    context_id: int
    score: float


@dataclass(frozen=True)
class AnswerContext:
    """A numbered context the answer may cite as [n]."""

    number: int
    title: str
    text: str
    link: str = ""
    whole: bool = False
    """Written as it is (a maintainer note), not a chunk cut from a page: no sentence of it is a cut fragment."""


@dataclass(frozen=True)
class AnswerRequest:
    question: str
    guru_name: str
    domain: str
    contexts: tuple[AnswerContext, ...]
    history: tuple[Turn, ...] = ()
    answer_length: AnswerLength = AnswerLength.MEDIUM
    language_hint: str = ""
    extra_rules: tuple[str, ...] = field(default=())
