"""An answer generated while the trust gate is still grading: held back until released, or cancelled.

The grade and the answer are the two LLM calls before a first answer token. Run one after the other, the
asker waits for both; run side by side, for the slower one. The answer is made from the contexts the
grade is *predicted* to keep (KeptPredictor: the reranker's scores through the trust rule, or what this
model's recent grades did), and its events queue here, unseen, until the grade has decided: the flow then
releases them if the grade kept exactly those contexts, or cancels the stream (a refusal, or other contexts
kept: it answers afresh from those).
So what an asker sees — refusals, the answer's prompt and text — is what the sequential pipeline made.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from backend.pipeline.answer_types import AnswerRequest
from backend.pipeline.llm_types import CancelToken, StreamEvent
from backend.pipeline.ports import Answerer
from backend.pipeline.support import keep_window


@dataclass
class LinkedCancelToken(CancelToken):
    """Cancelled by its own `cancel()` or when the parent is (the asker went away)."""

    parent: CancelToken = field(default_factory=CancelToken)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or self.parent.cancelled


def _window(priors: Sequence[float], threshold: float) -> tuple[int, ...]:
    # The trust step's own window, whatever the threshold: the scales differ, and a refusal the grade
    # confirms costs only the cancelled stream's tokens.
    return keep_window(priors) or keep_window(priors, floor=0.0)


def _best(priors: Sequence[float], threshold: float) -> tuple[int, ...]:
    return (max(range(len(priors)), key=lambda i: priors[i]),) if priors else ()


def _every(priors: Sequence[float], threshold: float) -> tuple[int, ...]:
    return tuple(range(len(priors)))


# How graders behave, from agreeing with the reranker to keeping one context or all: the first is the default.
STRATEGIES: dict[str, Callable[[Sequence[float], float], tuple[int, ...]]] = {
    "reranker": _window, "best": _best, "every": _every,
}
MEMORY = 20


class KeptPredictor:
    """Predicts the contexts a model's grade will keep, by whichever strategy matched its recent grades.

    Each graded question that was not refused scores every strategy (would it have predicted exactly the
    kept set?); the strategy with the most hits among the last MEMORY wins, ties going to the reranker's own
    rule. A model that grades stricter or more generously than the reranker is thus followed after a few
    questions instead of costing a discarded answer every time. Only index sets are kept, nothing asked.
    """

    def __init__(self, memory: int = MEMORY) -> None:
        self._hits = {name: deque[bool](maxlen=memory) for name in STRATEGIES}
        self._lock = threading.Lock()

    def strategy(self) -> str:
        with self._lock:
            return max(STRATEGIES, key=lambda name: sum(self._hits[name]))  # max keeps the first of equals

    def predict(self, priors: Sequence[float], *, threshold: float) -> tuple[int, ...]:
        return STRATEGIES[self.strategy()](priors, threshold)

    def learn(self, priors: Sequence[float], *, threshold: float, kept: tuple[int, ...]) -> None:
        if not kept:
            return  # a refusal says nothing about which contexts an answer is made from
        with self._lock:
            for name, predict in STRATEGIES.items():
                self._hits[name].append(predict(priors, threshold) == kept)


_predictors: dict[str, KeptPredictor] = {}
_predictors_lock = threading.Lock()


def predictor_for(model: str) -> KeptPredictor:
    """The predictor of one chat model in this process (graders differ by model, not by guru)."""
    with _predictors_lock:
        return _predictors.setdefault(model, KeptPredictor())


def forget() -> None:
    """Drop what every predictor learned (tests start from the reranker's rule)."""
    with _predictors_lock:
        _predictors.clear()


@dataclass(frozen=True)
class _Failed:
    error: Exception


class SpeculativeAnswer:
    """`answerer.answer(request)` running in a daemon thread from construction; read it with `events()`.

    The thread touches no database and holds only the model's HTTP stream; `cancel()` closes that stream at
    its next chunk (the adapters check the token between chunks), so a discarded answer stops costing tokens.
    """

    def __init__(self, answerer: Answerer, request: AnswerRequest, kept: tuple[int, ...], *,
                 parent: CancelToken, learn: Callable[[tuple[int, ...]], None] = lambda kept: None) -> None:
        self.kept = kept
        self.request = request
        self._learn = learn
        self._cancel = LinkedCancelToken(parent=parent)
        self._events: queue.SimpleQueue[StreamEvent | _Failed | None] = queue.SimpleQueue()  # None: the end
        self._thread = threading.Thread(target=self._run, args=(answerer,), daemon=True, name="answer-speculative")
        self._thread.start()

    def _run(self, answerer: Answerer) -> None:
        stream = answerer.answer(self.request, cancel=self._cancel)
        try:
            for event in stream:
                self._events.put(event)
                if self._cancel.cancelled:
                    break
        except Exception as exc:  # handed to the reader, who raises it where the sequential call would have
            self._events.put(_Failed(exc))
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # an abandoned SDK stream closes its HTTP response here, not at garbage collection
            self._events.put(None)

    def events(self) -> Iterator[StreamEvent]:
        """The held events, then the rest as they arrive; a failure of the stream is raised here."""
        while (item := self._events.get()) is not None:
            if isinstance(item, _Failed):
                raise item.error
            yield item

    def settle(self, kept: tuple[int, ...]) -> bool:
        """The grade kept `kept`: True if this answer was made from exactly those; else it is cancelled."""
        self._learn(kept)
        if kept == self.kept:
            return True
        self.cancel()
        return False

    def cancel(self) -> None:
        self._cancel.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.cancelled

    def join(self, timeout: float) -> bool:
        """Wait for the stream's thread to end (tests and benches); True when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
