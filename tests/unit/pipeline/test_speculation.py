"""The answer made ahead of the trust gate: which contexts it is made from, holding, releasing and cancelling it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from backend.adapters.llm.fake import ReplyScript, ScriptedChatModel, ScriptedReply
from backend.pipeline.answer_types import AnswerContext, AnswerLength, AnswerRequest
from backend.pipeline.answerer_llm import LLMAnswerer
from backend.pipeline.errors import TransientServiceError
from backend.pipeline.llm_types import CancelToken, TextDelta, Usage
from backend.pipeline.speculation import STRATEGIES, KeptPredictor, LinkedCancelToken, SpeculativeAnswer
from backend.pipeline.support import keep_window

REQUEST = AnswerRequest(question="How do I retry?", guru_name="Docs", domain="Celery",
                        contexts=(AnswerContext(1, "Retrying", "Call self.retry().", ""),), history=(),
                        answer_length=AnswerLength.SHORT, language_hint="en")


@pytest.mark.parametrize(("priors", "threshold", "kept"), [
    ([0.95, 0.9, 0.3], 0.5, (0, 1)),  # the trust step's own window: within 0.35 of the best, above its floor
    ([0.95, 0.5], 0.5, (0,)),
    ([0.25, 0.2, 0.1], 0.5, (0, 1, 2)),  # nothing reaches the floor: the best window is still tried
    ([], 0.5, ()),
])
def test_at_first_the_prediction_is_the_trust_rule_applied_to_the_reranker_scores(
    priors: list[float], threshold: float, kept: tuple[int, ...]
) -> None:
    assert KeptPredictor().predict(priors, threshold=threshold) == kept
    if priors and max(priors) >= threshold:
        assert kept == keep_window(priors)  # a grader that agrees: a hit


PRIORS = [[0.9, 0.85, 0.8, 0.3], [0.95, 0.9, 0.2], [0.7, 0.65, 0.6, 0.58]]


@pytest.mark.parametrize(("grader", "strategy"), [
    (lambda priors: keep_window(priors), "reranker"),
    (lambda priors: (0,), "best"),  # a model that finds one context relevant
    (lambda priors: tuple(range(len(priors))), "every"),  # one that rates every retrieved context 0.9
])
def test_the_predictor_follows_how_the_model_grades(grader: Callable[[list[float]], tuple[int, ...]],
                                                    strategy: str) -> None:
    predictor = KeptPredictor()
    for priors in PRIORS * 3:
        predictor.learn(priors, threshold=0.5, kept=grader(priors))
    assert predictor.strategy() == strategy
    assert all(predictor.predict(p, threshold=0.5) == grader(p) for p in PRIORS)


def test_refusals_teach_nothing_and_old_grades_are_forgotten() -> None:
    predictor = KeptPredictor(memory=4)
    for _ in range(3):
        predictor.learn(PRIORS[0], threshold=0.5, kept=())
    assert predictor.strategy() == "reranker"
    for _ in range(4):
        predictor.learn(PRIORS[0], threshold=0.5, kept=(0,))
    assert predictor.strategy() == "best"
    for _ in range(4):  # the model (or its prompt) changed: the last four grades decide
        predictor.learn(PRIORS[0], threshold=0.5, kept=(0, 1, 2, 3))
    assert predictor.strategy() == "every" and set(STRATEGIES) == {"reranker", "best", "every"}


def _answer(*replies: ScriptedReply, parent: CancelToken | None = None) -> SpeculativeAnswer:
    answerer = LLMAnswerer(ScriptedChatModel(ReplyScript().push(*replies)))
    return SpeculativeAnswer(answerer, REQUEST, (0,), parent=parent or CancelToken())


def test_held_events_are_released_in_order_with_the_usage_last() -> None:
    ahead = _answer(ScriptedReply(text="Call self.retry() [1].", chunks=4))
    assert ahead.join(timeout=10)  # it ran to its end on its own, before anyone read it
    assert ahead.settle((0,))  # the grade kept the contexts it was made from
    events = list(ahead.events())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Call self.retry() [1]."
    assert isinstance(events[-1], Usage) and not ahead.cancelled


def test_cancelling_stops_the_stream_before_its_end() -> None:
    ahead = _answer(ScriptedReply(text="x" * 200, chunks=200, chunk_delay=0.02))
    ahead.cancel()
    assert ahead.join(timeout=10)
    events = list(ahead.events())
    assert ahead.cancelled and len(events) < 200 and not any(isinstance(e, Usage) for e in events)


def test_the_asker_going_away_cancels_it_too() -> None:
    parent = CancelToken()
    ahead = _answer(ScriptedReply(text="x" * 200, chunks=200, chunk_delay=0.02), parent=parent)
    parent.cancel()
    assert ahead.join(timeout=10) and ahead.cancelled
    assert not any(isinstance(e, Usage) for e in ahead.events())


def test_a_failure_is_raised_to_the_reader() -> None:
    ahead = _answer(ScriptedReply(status=503))
    with pytest.raises(TransientServiceError):
        list(ahead.events())


def test_a_linked_token_is_set_by_itself_or_its_parent_only() -> None:
    parent = CancelToken()
    child = LinkedCancelToken(parent=parent)
    child.cancel()
    assert child.cancelled and not parent.cancelled
    assert LinkedCancelToken(parent=CancelToken()).cancelled is False


def test_settling_on_other_contexts_cancels_it_and_teaches_the_predictor() -> None:
    learned: list[tuple[int, ...]] = []
    answerer = LLMAnswerer(ScriptedChatModel(ReplyScript().push(ScriptedReply(text="x" * 200, chunks=200,
                                                                              chunk_delay=0.02))))
    ahead = SpeculativeAnswer(answerer, REQUEST, (0,), parent=CancelToken(), learn=learned.append)
    assert not ahead.settle((0, 1)) and ahead.cancelled and learned == [(0, 1)]
    assert ahead.join(timeout=10)
