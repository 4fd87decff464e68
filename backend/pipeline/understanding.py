"""Rule-based question understanding: validation, prettifying, intent, length, follow-up rewriting.

Used by the offline answerer, and by the LLM answerer to validate input before spending a call.
"""

from __future__ import annotations

import re

from backend.pipeline.answer_types import AnswerLength, Intent, Turn, Understanding, UnderstandRequest
from backend.pipeline.sanitize import neutralise, neutralise_line
from backend.pipeline.text import slugify

MIN_QUESTION_CHARS = 2
MAX_QUESTION_CHARS = 2000
_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|yo|good (morning|afternoon|evening)|thanks|thank you|thx|cheers)\b[\s!.,]*", re.IGNORECASE
)
_INTERROGATIVE = re.compile(
    r"^(what|how|why|when|where|who|whom|which|can|could|does|do|did|is|are|was|were|should|would|will|may)\b",
    re.IGNORECASE,
)
_LONG_HINTS = re.compile(r"\b(explain|compare|difference|step[- ]by[- ]step|in detail|walk me through)\b", re.I)
_FOLLOW_UP_HINTS = re.compile(r"\b(it|its|this|that|these|those|they|them|there|he|she|one)\b", re.IGNORECASE)


def normalise_question(raw: str) -> str:
    """Collapse whitespace; drop control characters."""
    cleaned = "".join(ch for ch in raw if ch.isprintable() or ch in "\n\t")
    return re.sub(r"\s+", " ", cleaned).strip()


def invalid_reason(question: str) -> str:
    """Why a normalised question cannot be answered, or '' when it can."""
    if len(question) < MIN_QUESTION_CHARS or not any(ch.isalnum() for ch in question):
        return "Please type a question."
    if len(question) > MAX_QUESTION_CHARS:
        return f"Questions are limited to {MAX_QUESTION_CHARS} characters; please shorten it."
    return ""


def prettify(question: str) -> str:
    """Capitalise, and end interrogative sentences with a question mark."""
    text = question[:1].upper() + question[1:]
    if _INTERROGATIVE.match(text) and not text.endswith(("?", ".", "!")):
        text += "?"
    return text


def guess_answer_length(question: str) -> AnswerLength:
    if _LONG_HINTS.search(question):
        return AnswerLength.LONG
    if len(question.split()) <= 5:
        return AnswerLength.SHORT
    return AnswerLength.MEDIUM


def retrieval_query(question: str, history: tuple[Turn, ...]) -> str:
    """Search text: a short or pronoun-led follow-up borrows the previous question's words."""
    if history and (len(question.split()) <= 6 or _FOLLOW_UP_HINTS.search(question)):
        return f"{history[-1].question} {question}"
    return question


def understand_by_rules(request: UnderstandRequest) -> Understanding:
    """Understanding without a language model; `in_scope` is left to retrieval and trust scoring."""
    question = normalise_question(request.question)
    reason = invalid_reason(question)
    if reason:
        return Understanding(question, slugify(question), Intent.INVALID, AnswerLength.SHORT, "", False, reason)
    pretty = neutralise_line(prettify(question))  # shown to other visitors as a title, maybe as markdown
    if _GREETING.fullmatch(question) or (_GREETING.match(question) and len(question.split()) <= 4):
        reply = neutralise(f"Hello! I'm {request.guru_name}. Ask me anything about {request.domain}.")
        return Understanding(pretty, slugify(pretty), Intent.GREETING, AnswerLength.SHORT, "", None, reply)
    return Understanding(
        prettified=pretty,
        slug=slugify(pretty),
        intent=Intent.QUESTION,
        answer_length=guess_answer_length(question),
        retrieval_query=retrieval_query(question, request.history),
    )
