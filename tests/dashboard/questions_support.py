"""Helpers shared by the dashboard's question tests: stored questions made in one line."""

from __future__ import annotations

import itertools
from typing import Any

from backend.answering.models import Channel, Question
from backend.gurus.models import Guru

_slugs = itertools.count()


def ask(guru: Guru, question: str, **fields: Any) -> Question:
    """An answered web question by default; `fields` set anything else (refused, channel, vectors...)."""
    values: dict[str, Any] = {"user_question": question.lower(), "content": "An answer.", "trust_score": 0.8,
                              "channel": Channel.WEB, "intent": "question"}
    values.update(fields)
    return Question.objects.create(guru=guru, question=question, slug=f"q-{next(_slugs)}", **values)
