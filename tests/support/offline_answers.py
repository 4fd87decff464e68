"""The offline answerer's text for a question over titled contexts, without its notice, and its quoted lines."""

from __future__ import annotations

from backend.pipeline.answer_types import AnswerContext, AnswerRequest
from backend.pipeline.answerer_offline import NO_LLM_NOTICE, OfflineAnswerer
from backend.pipeline.llm_types import TextDelta


def answer(question: str, *contexts: tuple[str, str]) -> str:
    numbered = tuple(AnswerContext(n, title, text) for n, (title, text) in enumerate(contexts, start=1))
    events = OfflineAnswerer().answer(AnswerRequest(question, "Guru", "Celery", numbered))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text.startswith(NO_LLM_NOTICE)
    return text.removeprefix(NO_LLM_NOTICE)


def quoted(text: str) -> list[str]:
    return [line.removeprefix("> ") for line in text.splitlines() if line.startswith("> ")]
