"""LLM calls before the first answer token, for first questions and follow-ups (part of bench/answer.py).

The guru bench/answer.py indexed answers through `answer_stream` with the OpenAI provider pointed at the fake
OpenAI-compatible server (tests/fakes/openai_server.py), each reply after `delay` seconds. Every request's
arrival and reply time are recorded; a call depends on those whose reply came before it was sent, and the
calls on the critical path are the longest such chain ending at the answer call whose tokens were shown.
Baseline: the same questions through the sequential pipeline (no answer made ahead of the grade).
Three fake graders: "agreeing" grades nothing, so every context keeps the reranker's score (the pipeline's rule
for skipped contexts) and the prediction holds; "strict" rates only the first context relevant (0.9, the
rest 0.1), "generous" every context 0.9 (keeps them all): where the reranker's scores predicted other
contexts than such a grader keeps, the answer made ahead is discarded and asked again.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply

FOLLOW_UPS = ["And what is its default value?", "How do I monitor it?", "Is it safe to change that on a live node?",
              "What does the log say when it fails?", "Does it matter on small machines?"]
_CONTEXT_ID = re.compile(r"<context id=(\d+)>")


@dataclass(frozen=True)
class Call:
    kind: str
    sent: float
    replied: float


@dataclass
class TimedScript(ReplyScript):
    """Replies by request shape after `delay` s, recording when each request came and was answered."""

    delay: float = 0.1
    grader: str = "agreeing"
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()
        self._calls_lock = threading.Lock()

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)
        now, properties = time.perf_counter(), (request.json_schema or {}).get("properties", {})
        kind = "answer" if request.stream else "grade" if "grades" in properties else "understand"
        with self._calls_lock:
            self.calls.append(Call(kind, now, now + self.delay))
        if kind == "grade":
            return ScriptedReply(json={"grades": self._grades(request.messages[-1][1])}, delay=self.delay)
        if kind == "understand":
            asked = request.messages[-1][1]
            standalone = asked.rsplit("New question: ", 1)[-1]
            previous = re.findall(r"(?m)^Q: (.*)$", asked) or re.findall(r"(?m)^User: (.*)$", asked)
            query = f"{previous[-1] if previous else ''} {standalone}".strip()
            return ScriptedReply(json={"prettified": query, "intent": "question", "answer_length": "short",
                                       "in_scope": True, "retrieval_query": query, "reply": ""}, delay=self.delay)
        return ScriptedReply(text="Set it in the configuration file and restart the service [1].", chunks=8,
                             delay=self.delay, stream=True)

    def _grades(self, prompt: str) -> list[dict[str, Any]]:
        if self.grader in ("strict", "generous"):
            best, rest = (0.9, 0.1) if self.grader == "strict" else (0.9, 0.9)
            return [{"id": int(i), "score": best if i == "0" else rest} for i in _CONTEXT_ID.findall(prompt)]
        return []  # a context the model does not grade keeps the reranker's score: a grader that agrees


def depth(calls: list[Call], answer: Call) -> int:
    """Calls in the longest chain of replies-before-requests that ends with `answer`."""
    memo: dict[Call, int] = {}

    def chain(call: Call) -> int:
        if call not in memo:
            memo[call] = 1 + max((chain(p) for p in calls if p.replied <= call.sent), default=0)
        return memo[call]

    return chain(answer)


@contextmanager
def sequential() -> Iterator[None]:
    """The pipeline as it was: the answer requested only after the grade."""
    from backend.answering.services import AnswerFlow

    original = AnswerFlow._speculate
    AnswerFlow._speculate = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        AnswerFlow._speculate = original  # type: ignore[method-assign]


@dataclass
class Turn:
    depth: int
    calls: int
    first_token_ms: float
    discarded: bool


def _ask(guru: Any, script: TimedScript, question: str, session: str | None) -> tuple[Turn | None, str]:
    from backend.answering.events import EventKind
    from backend.answering.services import AskRequest, answer_stream

    before, start, first = len(script.calls), time.perf_counter(), 0.0
    session_id, done = "", {}
    for event in answer_stream(AskRequest(guru=guru, question=question, channel="API", session_id=session)):
        if event.kind is EventKind.QUESTION:
            session_id = event.data["session_id"]
        elif event.kind is EventKind.DELTA and not first:
            first = time.perf_counter()
        elif event.kind in (EventKind.DONE, EventKind.ERROR):
            done = event.data
    if "timings" not in done:
        raise RuntimeError(f"the bench question failed: {question!r} -> {done}")
    if done.get("out_of_context"):
        return None, session_id  # refused: no answer token to reach
    calls = script.calls[before:]
    shown = [c for c in calls if c.kind == "answer" and c.sent < first][-1]
    turn = Turn(depth(calls, shown), len(calls), (first - start) * 1000,
                bool(done["timings"].get("speculation_discarded")))
    return turn, session_id


def run(guru: Any, server: Any, firsts: list[str], *, delay: float) -> dict[str, dict[str, list[Turn | None]]]:
    """{pipeline: {"first"/"follow_up": turns}} for each grader, pipeline "ours" and "sequential"."""
    from django.test import override_settings

    from backend.answering.models import Question
    from backend.pipeline import speculation

    results: dict[str, dict[str, list[Turn | None]]] = {}
    for grader in ("agreeing", "strict", "generous"):
        for pipeline in ("ours", "sequential"):
            speculation.forget()  # each grader's run starts from the reranker's rule and learns its own way
            server.script = script = TimedScript(delay=delay, grader=grader)
            turns: dict[str, list[Turn | None]] = {"first": [], "follow_up": []}
            with override_settings(OPENGURU_LLM=server.llm_settings()), \
                    (sequential() if pipeline == "sequential" else _nothing()):
                for n, question in enumerate(firsts):
                    turn, session = _ask(guru, script, question, None)
                    turns["first"].append(turn)
                    turns["follow_up"].append(_ask(guru, script, FOLLOW_UPS[n % len(FOLLOW_UPS)], session)[0])
            Question.objects.all().delete()  # the next run must not be served from the answer cache
            results[f"{grader}/{pipeline}"] = turns
    return results


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def summarise(results: list[Turn | None]) -> str:
    turns = [t for t in results if t is not None]
    if not turns:
        return f"calls_deep mean=- (all {len(results)} refused)"
    depths = [t.depth for t in turns]
    return (f"calls_deep mean={statistics.fmean(depths):.2f} max={max(depths)} "
            f"calls_made={statistics.fmean(t.calls for t in turns):.1f} "
            f"first_token_ms p50={statistics.median(t.first_token_ms for t in turns):.0f} "
            f"discarded={sum(t.discarded for t in turns)}/{len(turns)} refused={len(results) - len(turns)}")
