"""The offline and the LLM answerer pass one contract; then what is specific to each."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from backend.adapters.llm.fake import ReplyScript, ScriptedChatModel, ScriptedReply
from backend.pipeline.answer_types import (
    AnswerContext,
    AnswerLength,
    AnswerRequest,
    GradeInput,
    Intent,
    Turn,
    UnderstandRequest,
)
from backend.pipeline.answerer_llm import LLMAnswerer
from backend.pipeline.answerer_offline import NO_LLM_NOTICE, OfflineAnswerer
from backend.pipeline.llm_types import TextDelta, Usage
from backend.pipeline.ports import Answerer
from backend.pipeline.text import slugify

CONTEXTS = (
    AnswerContext(1, "Retrying tasks", "Tasks can be retried. Call self.retry() inside a bound task to retry it. "
                  "The countdown argument sets the delay.", "https://docs.example.com/retry"),
    AnswerContext(2, "Brokers", "Celery needs a message broker. Redis and RabbitMQ are supported."),
    AnswerContext(3, "Unrelated", "The cafeteria opens at nine. Lunch is served until two."),
)
UNDERSTAND_REPLY = ScriptedReply(json={
    "prettified": "How do I retry a task?", "intent": "question", "answer_length": "medium",
    "in_scope": True, "retrieval_query": "celery retry task", "reply": "",
})


@dataclass
class Case:
    answerer: Answerer
    script: ReplyScript | None


@pytest.fixture(params=["offline", "llm"])
def case(request: pytest.FixtureRequest) -> Case:
    if request.param == "offline":
        return Case(OfflineAnswerer(), None)
    script = ReplyScript()
    return Case(LLMAnswerer(ScriptedChatModel(script)), script)


def _push(case: Case, *replies: ScriptedReply) -> None:
    if case.script is not None:
        case.script.push(*replies)


@pytest.mark.parametrize("raw", ["", "   ", "?!", "x" * 2001])
def test_invalid_questions_are_refused_without_a_model_call(case: Case, raw: str) -> None:
    understanding, usage = case.answerer.understand(UnderstandRequest(raw, "Celery Guru", "Celery"))
    assert understanding.intent is Intent.INVALID and understanding.reply
    assert usage is None
    assert case.script is None or case.script.requests == []


def test_understand_gives_a_slug_and_a_retrieval_query(case: Case) -> None:
    _push(case, UNDERSTAND_REPLY)
    understanding, _ = case.answerer.understand(UnderstandRequest("how do i retry a task", "Celery Guru", "Celery"))
    assert understanding.intent is Intent.QUESTION
    assert understanding.prettified.startswith("How do") and understanding.prettified.endswith("?")
    assert understanding.slug == slugify(understanding.prettified)
    assert understanding.retrieval_query


def test_grades_are_mapped_by_context_id_and_bounded(case: Case) -> None:
    _push(case, ScriptedReply(json={"grades": [{"id": 9, "score": 1.7}, {"id": 3, "score": 0.1}]}))
    inputs = [GradeInput(3, "a", 0.2), GradeInput(7, "b", 0.55), GradeInput(9, "c", 0.9)]
    grades, _ = case.answerer.grade("q", inputs)
    by_id = {g.context_id: g.score for g in grades}
    assert set(by_id) == {3, 7, 9}
    assert all(0.0 <= s <= 1.0 for s in by_id.values())
    assert by_id[7] == 0.55  # not graded by the model: keeps the reranker's score


def test_answer_streams_text_then_exactly_one_usage(case: Case) -> None:
    _push(case, ScriptedReply(text="Call self.retry() [1].", chunks=3))
    request = AnswerRequest("How do I retry a task?", "Celery Guru", "Celery", CONTEXTS)
    events = list(case.answerer.answer(request))
    assert all(isinstance(e, TextDelta) for e in events[:-1]) and len(events) >= 2
    assert isinstance(events[-1], Usage)
    assert "[1]" in "".join(e.text for e in events[:-1])  # type: ignore[union-attr]


def test_summary_respects_the_length_limit(case: Case) -> None:
    _push(case, ScriptedReply(text="Celery runs tasks in workers and retries them."))
    summary = case.answerer.summarize([c.text for c in CONTEXTS], max_chars=120)
    assert 0 < len(summary.text) <= 120


def test_offline_answer_says_no_llm_and_quotes_the_relevant_sentence() -> None:
    request = AnswerRequest("How do I retry a task?", "Celery Guru", "Celery", CONTEXTS)
    text = "".join(e.text for e in OfflineAnswerer().answer(request) if isinstance(e, TextDelta))
    assert text.startswith(NO_LLM_NOTICE)
    assert "> Call self.retry() inside a bound task to retry it." in text
    assert "**Retrying tasks** [1]" in text


def test_offline_greeting_is_answered_without_retrieval() -> None:
    understanding, _ = OfflineAnswerer().understand(UnderstandRequest("hello!", "Celery Guru", "Celery"))
    assert understanding.intent is Intent.GREETING and "Celery Guru" in understanding.reply


def test_offline_follow_up_borrows_the_previous_question() -> None:
    history = (Turn("How do I retry a Celery task?", "Use self.retry()."),)
    understanding, _ = OfflineAnswerer().understand(UnderstandRequest("and the delay?", "G", "Celery", history))
    assert understanding.retrieval_query == "How do I retry a Celery task? and the delay?"


def test_offline_answer_length_guess() -> None:
    long_q = UnderstandRequest("Explain the difference between countdown and eta", "G", "Celery")
    assert OfflineAnswerer().understand(long_q)[0].answer_length is AnswerLength.LONG


def test_llm_prompts_carry_contexts_rules_and_history_in_order() -> None:
    chat = ScriptedChatModel()
    history = (Turn("What is Celery?", "A task queue."),)
    request = AnswerRequest("How do I retry?", "Celery Guru", "Celery", CONTEXTS, history=history,
                            answer_length=AnswerLength.SHORT)
    list(LLMAnswerer(chat).answer(request))
    roles = [role for role, _ in chat.script.requests[-1].messages]
    assert roles == ["system", "user", "assistant", "user"]
    system = chat.script.requests[-1].messages[0][1]
    assert "[1] Retrying tasks (https://docs.example.com/retry)" in system
    assert "Cite the contexts" in system and "one to three sentences" in system


def test_llm_understand_sends_the_conversation() -> None:
    chat = ScriptedChatModel(ReplyScript().push(UNDERSTAND_REPLY))
    history = (Turn("What is Celery?", "A task queue."),)
    understanding, usage = LLMAnswerer(chat).understand(UnderstandRequest("and retries?", "G", "Celery", history))
    assert understanding.retrieval_query == "celery retry task" and usage is not None
    assert "Conversation so far" in chat.script.requests[-1].messages[1][1]
