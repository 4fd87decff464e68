"""The LLM answerer: each task-level call is one ChatModel call with a prompt from prompts.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from backend.pipeline import prompts
from backend.pipeline.answer_types import (
    AnswerLength,
    AnswerRequest,
    Grade,
    GradeInput,
    Intent,
    Understanding,
    UnderstandRequest,
)
from backend.pipeline.llm_types import CancelToken, Completion, Flow, Message, Role, StreamEvent, Usage
from backend.pipeline.ports import ChatModel
from backend.pipeline.sanitize import neutralise, neutralise_line
from backend.pipeline.text import slugify
from backend.pipeline.understanding import invalid_reason, normalise_question, understand_by_rules

UNDERSTAND_MAX_TOKENS = 400
GRADE_MAX_TOKENS = 60
ANSWER_MAX_TOKENS = {AnswerLength.SHORT: 300, AnswerLength.MEDIUM: 900, AnswerLength.LONG: 2000}


def _intent(value: object) -> Intent:
    try:
        return Intent(str(value))
    except ValueError:
        return Intent.QUESTION


def _answer_length(value: object) -> AnswerLength:
    try:
        return AnswerLength(str(value))
    except ValueError:
        return AnswerLength.MEDIUM


class LLMAnswerer:
    """Answerer backed by a ChatModel; invalid input is rejected by rules before any call."""

    def __init__(self, chat: ChatModel) -> None:
        self.chat = chat

    @property
    def uses_llm(self) -> bool:
        return True

    def understand(self, request: UnderstandRequest) -> tuple[Understanding, Usage | None]:
        question = normalise_question(request.question)
        if invalid_reason(question):
            return understand_by_rules(request), None
        user = question
        if request.history:
            user = f"Conversation so far:\n{prompts.history_text(request.history)}\n\nNew question: {question}"
        messages = [Message(Role.SYSTEM, prompts.understand_system(request.guru_name, request.domain)),
                    Message(Role.USER, user)]
        result = self.chat.complete_json(messages, schema=prompts.UNDERSTAND_SCHEMA, schema_name="understanding",
                                         max_tokens=UNDERSTAND_MAX_TOKENS, flow=Flow.UNDERSTAND)
        data = result.data
        # Model output shown as markdown (the question title, the small-talk reply): defused like answers.
        pretty = neutralise_line(str(data.get("prettified") or question).strip())
        understanding = Understanding(
            prettified=pretty,
            slug=slugify(pretty),
            intent=_intent(data.get("intent")),
            answer_length=_answer_length(data.get("answer_length")),
            retrieval_query=str(data.get("retrieval_query") or question).strip(),
            in_scope=bool(data.get("in_scope", True)),
            reply=neutralise(str(data.get("reply") or "").strip()),
        )
        return understanding, result.usage

    def grade(self, question: str, contexts: Sequence[GradeInput]) -> tuple[list[Grade], Usage | None]:
        if not contexts:
            return [], None
        messages = [Message(Role.SYSTEM, prompts.grade_system()),
                    Message(Role.USER, prompts.grade_user(question, [(c.context_id, c.text) for c in contexts]))]
        result = self.chat.complete_json(messages, schema=prompts.GRADE_SCHEMA, schema_name="grades",
                                         max_tokens=GRADE_MAX_TOKENS * len(contexts), flow=Flow.GRADE)
        by_id: dict[int, float] = {}
        for item in result.data.get("grades", []):
            if isinstance(item, dict) and isinstance(item.get("id"), int):
                by_id[item["id"]] = min(1.0, max(0.0, float(item.get("score", 0.0))))
        # A context the model skipped keeps the reranker's opinion instead of silently scoring 0.
        return [Grade(c.context_id, by_id.get(c.context_id, c.prior)) for c in contexts], result.usage

    def answer(self, request: AnswerRequest, *, cancel: CancelToken | None = None) -> Iterator[StreamEvent]:
        messages = [Message(Role.SYSTEM, prompts.answer_system(request))]
        for turn in request.history:
            messages += [Message(Role.USER, turn.question), Message(Role.ASSISTANT, turn.answer)]
        messages.append(Message(Role.USER, request.question))
        return self.chat.stream(messages, max_tokens=ANSWER_MAX_TOKENS[request.answer_length], flow=Flow.ANSWER,
                                cancel=cancel)

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> Completion:
        messages = [Message(Role.USER, prompts.summarize_user(list(texts), max_chars))]
        return self.chat.complete(messages, max_tokens=max(64, max_chars // 3), flow=Flow.SUMMARIZE)
