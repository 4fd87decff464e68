"""Drafts of a guru's domain-knowledge text and example questions from its summary, by an LLM or by rules."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from backend.pipeline.llm_types import Flow, Message, Role, Usage
from backend.pipeline.ports import ChatModel
from backend.pipeline.prompts import DATA_NOT_INSTRUCTIONS
from backend.pipeline.sanitize import neutralise_line
from backend.pipeline.suggest_rules import OFFLINE_DRAFTER, offline_domain, offline_questions
from backend.pipeline.text import split_sentences

MAX_DOMAIN_CHARS = 500
MAX_QUESTION_CHARS = 200
MIN_QUESTIONS = 5
MAX_QUESTIONS = 10
MIN_QUESTION_WORDS = 3
MAX_SUMMARY_CHARS = 8000
"""Of the summary sent to the model: the guru summary is already short; this bounds the prompt anyway."""
MAX_TITLES = 40
MAX_TITLE_CHARS = 200
TOKENS_PER_QUESTION = 80
DOMAIN_TOKENS = 200

SUGGEST_SCHEMA = {
    "type": "object",
    "properties": {
        "domain_knowledge": {"type": "string"},
        "questions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["domain_knowledge", "questions"],
    "additionalProperties": False,
}

_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_QUOTES = "\"'“”‘’`"
_NOT_WORD = re.compile(r"\W+")
# As prompts._quoted: the material can neither close its <context> block nor open a fake one.
_CONTEXT_TAG = re.compile(r"</?\s*context", re.IGNORECASE)


@dataclass(frozen=True)
class Suggestion:
    """A draft for the maintainer to edit and approve; nothing is saved by drafting."""

    domain_knowledge: str
    questions: tuple[str, ...]
    drafted_by: str
    """The model id that wrote it, or OFFLINE_DRAFTER for the rules."""
    usage: Usage | None = None
    """Tokens the model call spent (None for the rules)."""


def _count(count: int) -> int:
    return min(MAX_QUESTIONS, max(MIN_QUESTIONS, count))


def _one_line(text: object) -> str:
    """Model or source text as one neutralised line with single spaces."""
    return " ".join(neutralise_line(str(text)).split())


def clip_domain(text: object) -> str:
    """At most MAX_DOMAIN_CHARS: whole sentences when they fit, else cut after a word with an ellipsis."""
    line = _one_line(text)
    if len(line) <= MAX_DOMAIN_CHARS:
        return line
    kept = ""
    for sentence in split_sentences(line):
        if len(kept) + len(sentence) + 1 > MAX_DOMAIN_CHARS:
            break
        kept = f"{kept} {sentence}".strip()
    return kept or line[: MAX_DOMAIN_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def clean_question(text: object) -> str:
    """The question as one line without list marker or quotes; "" when it is no usable question."""
    line = _LIST_MARKER.sub("", _one_line(text)).strip(_QUOTES + " ")
    if not line.endswith("?") or len(line) > MAX_QUESTION_CHARS or len(line.split()) < MIN_QUESTION_WORDS:
        return ""
    return line[0].upper() + line[1:]


def distinct_questions(candidates: Iterable[object], limit: int) -> list[str]:
    """Usable questions, each once (ignoring case and punctuation), at most `limit`."""
    kept: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        question = clean_question(candidate)
        key = _NOT_WORD.sub(" ", question.casefold()).strip()
        if question and key not in seen:
            seen.add(key)
            kept.append(question)
        if len(kept) >= limit:
            break
    return kept


def suggest_offline(*, name: str, summary: str, titles: Sequence[str], count: int = 8) -> Suggestion:
    """A draft by rules: the summary's most central sentence(s), questions from titles and its key terms."""
    questions = distinct_questions(offline_questions(name=name, summary=summary, titles=titles), _count(count))
    domain = clip_domain(offline_domain(name=name, summary=summary, titles=titles))
    return Suggestion(domain_knowledge=domain, questions=tuple(questions), drafted_by=OFFLINE_DRAFTER)


def _quoted(text: str) -> str:
    return _CONTEXT_TAG.sub(lambda m: m.group(0)[0] + "\u200b" + m.group(0)[1:], text)


def suggest_system(name: str, count: int) -> str:
    return (
        f"You help the maintainer of {name}, an assistant that answers visitors' questions from its sources. "
        "From the summary of those sources, draft two things and return them as JSON. domain_knowledge: one "
        f"or two sentences, at most {MAX_DOMAIN_CHARS} characters, saying what {name} knows about (its "
        "subject and scope, no marketing). questions: "
        f"{count} distinct questions a visitor might ask, each a single sentence under {MAX_QUESTION_CHARS} "
        "characters ending with a question mark, each answerable from the summary; vary them from overview "
        "to specific. Write in the language of the summary. " + DATA_NOT_INSTRUCTIONS
    )


def suggest_user(summary: str, titles: Sequence[str]) -> str:
    listed = "\n".join(f"- {_one_line(t)[:MAX_TITLE_CHARS]}" for t in list(titles)[:MAX_TITLES] if t.strip())
    material = summary.strip()[:MAX_SUMMARY_CHARS]
    return f"<context>\nSource titles:\n{_quoted(listed) or '(none)'}\n\nSummary:\n{_quoted(material)}\n</context>"


def _questions_of(data: dict[str, Any]) -> list[object]:
    value = data.get("questions")
    return list(value) if isinstance(value, list) else []


def suggest_with_llm(chat: ChatModel, *, name: str, summary: str, titles: Sequence[str],
                     count: int = 8) -> Suggestion:
    """A draft by the model, validated and clipped; too few usable questions are topped up by the rules."""
    count = _count(count)
    messages = [Message(Role.SYSTEM, suggest_system(name, count)), Message(Role.USER, suggest_user(summary, titles))]
    result = chat.complete_json(messages, schema=SUGGEST_SCHEMA, schema_name="suggestion",
                                max_tokens=DOMAIN_TOKENS + TOKENS_PER_QUESTION * count, flow=Flow.SUMMARIZE)
    questions = distinct_questions(_questions_of(result.data), count)
    domain = clip_domain(result.data.get("domain_knowledge") or "")
    if len(questions) < MIN_QUESTIONS or not domain:
        fallback = suggest_offline(name=name, summary=summary, titles=titles, count=count)
        questions = distinct_questions([*questions, *fallback.questions], max(MIN_QUESTIONS, len(questions)))
        domain = domain or fallback.domain_knowledge
    return Suggestion(domain_knowledge=domain, questions=tuple(questions),
                      drafted_by=result.usage.model or chat.model, usage=result.usage)
