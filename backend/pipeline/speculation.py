"""An answer generated while the trust gate is still grading: held back until released, or cancelled.

The grade and the answer are the two LLM calls before a first answer token. Run one after the other, the
asker waits for both; run side by side, for the slower one. The answer is made from the contexts the
grade is *predicted* to keep (the reranker's scores through the same selection rule), and its events
queue here, unseen, until the grade has decided: the flow then releases them if the grade kept exactly
those contexts, or cancels the stream (a refusal, or other contexts kept: it answers afresh from those).
So what an asker sees — refusals, the answer's prompt and text — is what the sequential pipeline made.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from backend.pipeline.answer_types import AnswerRequest
from backend.pipeline.contexts import select_trusted
from backend.pipeline.llm_types import CancelToken, StreamEvent
from backend.pipeline.ports import Answerer


@dataclass
class LinkedCancelToken(CancelToken):
    """Cancelled by its own `cancel()` or when the parent is (the asker went away)."""

    parent: CancelToken = field(default_factory=CancelToken)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or self.parent.cancelled


def predicted_kept(priors: Sequence[float], *, threshold: float) -> tuple[int, ...]:
    """The contexts the trust gate would keep if the grader agreed with the reranker.

    When no prior reaches the threshold, the best-scored window is still predicted: reranker and grader use
    different scales, and a refusal the grade confirms costs only the cancelled stream's tokens.
    """
    return select_trusted(priors, threshold=threshold).kept or select_trusted(priors, threshold=0.0).kept


@dataclass(frozen=True)
class _Failed:
    error: Exception


class SpeculativeAnswer:
    """`answerer.answer(request)` running in a daemon thread from construction; read it with `events()`.

    The thread touches no database and holds only the model's HTTP stream; `cancel()` closes that stream at
    its next chunk (the adapters check the token between chunks), so a discarded answer stops costing tokens.
    """

    def __init__(self, answerer: Answerer, request: AnswerRequest, kept: tuple[int, ...], *,
                 parent: CancelToken) -> None:
        self.kept = kept
        self.request = request
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

    def cancel(self) -> None:
        self._cancel.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.cancelled

    def join(self, timeout: float) -> bool:
        """Wait for the stream's thread to end (tests and benches); True when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
