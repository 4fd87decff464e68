"""The plain-Python consumer of an answer's events, for channels that are not HTTP streams (bots, MCP)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.answering.events import AnswerEvent, EventKind
from backend.answering.models import Channel
from backend.answering.services import AskRequest, answer_stream
from backend.pipeline.llm_types import CancelToken


@dataclass(frozen=True)
class AnswerError:
    """An `error` event: a stable code, a sentence for people, the id its cause was logged under."""

    code: str
    msg: str
    error_id: str = ""


@dataclass
class Answer:
    """What the events of one answer said so far; complete once `done` or `error` has been seen."""

    question_id: int = 0
    session_id: str | None = None
    slug: str = ""
    question: str = ""
    text: str = ""
    stage: str = ""
    references: list[dict[str, Any]] = field(default_factory=list)
    trust_score: float | None = None
    out_of_context: bool = False
    done: bool = False
    error: AnswerError | None = None

    @property
    def finished(self) -> bool:
        return self.done or self.error is not None

    def feed(self, event: AnswerEvent) -> None:
        """Fold one event in (the last `references` or `done` event is the final list)."""
        data = event.data
        if event.kind is EventKind.QUESTION:
            self.question_id, self.slug = int(data["question_id"]), str(data.get("slug", ""))
            self.session_id, self.question = data.get("session_id"), str(data.get("question", ""))
        elif event.kind is EventKind.STATUS:
            self.stage = str(data.get("stage", ""))
        elif event.kind is EventKind.DELTA:
            self.text += str(data["text"])
        elif event.kind is EventKind.REFERENCES:
            self.references, self.trust_score = list(data.get("references") or []), data.get("trust_score")
        elif event.kind is EventKind.DONE:
            self.references, self.trust_score = list(data.get("references") or []), data.get("trust_score")
            self.out_of_context, self.done = bool(data.get("out_of_context")), True
        elif event.kind is EventKind.ERROR:
            self.error = AnswerError(str(data["code"]), str(data["msg"]), str(data.get("error_id", "")))


def follow(events: Iterable[AnswerEvent]) -> Iterator[tuple[AnswerEvent, Answer]]:
    """Each event with the answer as it stands after it: what a bot needs to show progress and the end."""
    answer = Answer()
    for event in events:
        answer.feed(event)
        yield event, answer


def ask(request: AskRequest, *, cancel: CancelToken | None = None) -> Answer:
    """Run the whole answer in this thread and return it (errors are in `.error`, never raised)."""
    answer = Answer()
    for event in answer_stream(request, cancel=cancel):
        answer.feed(event)
    return answer


__all__ = ["Answer", "AnswerError", "AskRequest", "Channel", "ask", "follow"]
