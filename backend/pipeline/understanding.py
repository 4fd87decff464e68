"""Rule-based question understanding: validation, prettifying, intent, length, follow-up rewriting.

Used by the offline answerer, and by the LLM answerer to validate input before spending a call.
"""

from __future__ import annotations

import re

from backend.pipeline.answer_types import AnswerLength, Intent, Turn, Understanding, UnderstandRequest
from backend.pipeline.follow_up import refers_back
from backend.pipeline.sanitize import neutralise, neutralise_line
from backend.pipeline.text import slugify

MIN_QUESTION_CHARS = 2
MAX_QUESTION_CHARS = 2000
MAX_BORROWED = 3
"""Earlier questions a follow-up may borrow words from, so a long chain of "and ...?" keeps a bounded query."""
_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|yo|good (morning|afternoon|evening)|thanks|thank you|thx|cheers)\b[\s!.,]*", re.IGNORECASE
)
_INTERROGATIVE = re.compile(
    r"^(what|how|why|when|where|who|whom|which|can|could|does|do|did|is|are|was|were|should|would|will|may)\b",
    re.IGNORECASE,
)
_LONG_HINTS = re.compile(r"\b(explain|compare|difference|step[- ]by[- ]step|in detail|walk me through)\b", re.I)


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
    """Search text: a question that refers back borrows the earlier questions it leans on; any other is searched
    on its own, however short ("How do I limit upload bandwidth?" after a monitoring question finds its own page).

    The borrowing goes back to the last question that stood alone ("How do I install it?", "And on Windows?",
    "Is it slow there?" all lean on "How do I install the agent?"), at most MAX_BORROWED questions.
    """
    borrowed: list[str] = []
    current = question
    for turn in reversed(history):
        if len(borrowed) == MAX_BORROWED or not refers_back(current):
            break
        borrowed.insert(0, turn.question)
        current = turn.question
    return " ".join([*borrowed, question])


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
