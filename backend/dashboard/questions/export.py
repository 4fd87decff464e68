"""The questions list as CSV: the same filters as the page, streamed row by row, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from backend.answering.models import Channel, Question
from backend.dashboard.places import question_place
from backend.dashboard.questions.selectors import question_list
from backend.gurus.models import Guru

HEADER = ("id", "asked_at", "channel", "question", "user_question", "answer", "status", "trust_score", "feedback",
          "latency_ms", "cost_usd", "references", "place")
COLUMNS = ("id", "created_at", "channel", "question", "user_question", "content", "out_of_context", "trust_score",
           "feedback", "latency_ms", "cost_usd", "references", "binge__place")
MAX_ROWS = 100_000  # a bound on one download; the filters narrow bigger guru histories
FETCH_BATCH = 200  # rows read, and CSV lines made, per step: a step holds ~5 MB with 8 KB answers
# A cell starting with one of these is read as a formula by spreadsheet programs (CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_CHANNELS = dict(Channel.choices)
_FEEDBACK = {1: "up", -1: "down"}


class _Echo:
    """A file-like object whose write returns the line, so csv.writer can feed a streaming response."""

    def write(self, value: str) -> str:
        return value


def safe_cell(value: object) -> str:
    """The value as text, quoted with a leading apostrophe when a spreadsheet would run it as a formula."""
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def _status(question: Question) -> str:
    if question.out_of_context:
        return "refused"
    return "answered" if question.content else "unfinished"


def _references(references: Any) -> str:
    if not isinstance(references, list):
        return ""
    parts = (str(ref.get("title") or ref.get("link") or "") for ref in references if isinstance(ref, dict))
    return " | ".join(part for part in parts if part)


def question_row(question: Question) -> list[str]:
    values: Iterable[object] = (
        question.pk, question.created_at.isoformat(), _CHANNELS.get(question.channel, question.channel),
        question.question, question.user_question, question.content, _status(question), question.trust_score,
        _FEEDBACK.get(question.feedback or 0, ""), question.latency_ms, question.cost_usd,
        _references(question.references), question_place(question))
    return [safe_cell(value) for value in values]


def csv_lines(*, guru: Guru, filters: dict[str, Any]) -> Iterator[str]:
    """The header, then one CSV line per matching question, newest first (at most MAX_ROWS)."""
    writer = csv.writer(_Echo())
    yield writer.writerow(HEADER)
    questions = question_list(guru=guru, filters=filters).only(*COLUMNS)[:MAX_ROWS]
    for question in questions.iterator(chunk_size=FETCH_BATCH):
        yield writer.writerow(question_row(question))
