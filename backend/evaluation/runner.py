"""Evaluation runs: every question of a set through the real answer pipeline, scored, summed up and stored."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from backend.adapters import registry
from backend.answering.grounding import Grounding
from backend.answering.models import Binge, Channel
from backend.answering.selectors import chat_model_for, sources_version, thresholds_for
from backend.answering.services import AskRequest, answer_stream
from backend.core.errors import Conflict, RequestError
from backend.core.tasks import enqueue_on_commit
from backend.evaluation.models import EvalRun, EvalSet, RunState
from backend.evaluation.sets import set_cases
from backend.gurus.models import Guru
from backend.pipeline.contexts import Context
from backend.pipeline.evaluation import EvalCase, Observation, Seen, score_case
from backend.pipeline.evaluation_judge import JUDGE_MAX_TOKENS, JUDGE_SCHEMA, judge_messages, judge_score
from backend.pipeline.evaluation_report import summarise, sweep
from backend.pipeline.llm_types import Flow
from backend.pipeline.pricing import parse_prices, usage_cost
from backend.pipeline.types import SourceKind
from backend.sources.selectors import guru_unsettled

logger = logging.getLogger(__name__)

K = 5
"""References counted by recall@k, MRR and hit@k: what an asker reads."""


def _seen(context: Context) -> Seen:
    return Seen(title=context.title, link=context.link, text=context.text, note=context.kind is SourceKind.MEMORY)


@dataclass
class _Asked:
    """One question's events, gathered."""

    text: str = ""
    session_id: str = ""
    done: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    grounding: Grounding | None = None


def _ask(guru: Guru, question: str, session_id: str | None) -> _Asked:
    """Ask through the answer pipeline as a trial (no cached replay, not a gap) and gather its events."""
    asked = _Asked()

    def observe(grounding: Grounding) -> None:
        asked.grounding = grounding

    request = AskRequest(guru=guru, question=question, channel=Channel.EVAL, session_id=session_id)
    for event in answer_stream(request, observe=observe, trial=True):
        kind, data = event.kind.value, event.data
        if kind == "question":
            asked.session_id = str(data["session_id"])
        elif kind == "delta":
            asked.text += str(data.get("text", ""))
        elif kind == "done":
            asked.done = dict(data)
        elif kind == "error":
            asked.error = f"{data.get('code', 'error')}: {data.get('msg', '')}"
    return asked


def _tokens(usage: dict[str, dict[str, Any]]) -> int:
    return sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in usage.values())


def _judge(guru: Guru, question: str, answer: str, references: Sequence[Seen]) -> tuple[float, int]:
    """The LLM judge's groundedness and the tokens it spent."""
    chat = registry.chat_model(model=chat_model_for(guru))
    if chat is None:
        return 0.0, 0
    result = chat.complete_json(judge_messages(question, answer, references), schema=JUDGE_SCHEMA,
                                schema_name="groundedness", max_tokens=JUDGE_MAX_TOKENS, flow=Flow.JUDGE)
    return judge_score(result.data), result.usage.prompt_tokens + result.usage.completion_tokens


def observe_case(guru: Guru, case: EvalCase, *, judge: bool = False) -> Observation:
    """What the pipeline does with one case; its conversation (earlier questions first) is deleted after."""
    session: str | None = None
    try:
        for earlier in case.history:
            session = _ask(guru, earlier, session).session_id or session
        asked = _ask(guru, case.question, session)
        session = asked.session_id or session
    finally:
        if session:
            Binge.objects.filter(pk=session, guru=guru).delete()
    done, grounding = asked.done, asked.grounding
    refused = bool(asked.error) or bool(done.get("out_of_context", True)) or not done.get("references")
    retrieved = tuple(_seen(c) for c in grounding.retrieval.contexts) if grounding else ()
    references = () if refused or grounding is None else tuple(_seen(c) for c in grounding.kept)
    usage: dict[str, dict[str, Any]] = done.get("usage") or {}
    tokens, groundedness = _tokens(usage), None
    if judge and not refused and registry.llm_enabled():
        groundedness, spent = _judge(guru, case.question, asked.text, references)
        tokens += spent
    return Observation(
        retrieved=retrieved, references=references, refused=refused,
        trust=grounding.decision.trust_score if grounding else 0.0, answer=asked.text,
        timings=done.get("timings") or {}, tokens=tokens,
        cost_usd=float(usage_cost(usage, parse_prices(settings.OPENGURU_MODEL_PRICES))), judge=groundedness,
        error=asked.error, signals=dict(grounding.signals) if grounding else {})


def run_create(guru: Guru, *, set_name: str, total: int, eval_set: EvalSet | None = None,
               user: User | None = None) -> EvalRun:
    """A RUNNING run with the settings it measures."""
    rerank, trust = thresholds_for(guru)
    return EvalRun.objects.create(guru=guru, eval_set=eval_set, set_name=set_name[:200], created_by=user,
                                  trust_threshold=trust, rerank_threshold=rerank, total=total,
                                  answer_model=chat_model_for(guru) or registry.answerer().__class__.__name__,
                                  sources_version=sources_version(guru))


def run_start(guru: Guru, *, eval_set: EvalSet, user: User | None = None) -> EvalRun:
    """Queue a run of the set for the worker; one run at a time per guru."""
    total = eval_set.items.count()
    if not total:
        raise RequestError(400, "empty_eval_set", "This set has no questions yet.")
    with transaction.atomic():
        if EvalRun.objects.select_for_update().filter(guru=guru, state=RunState.RUNNING).exists():
            raise Conflict("An evaluation of this guru is already running; wait for it to finish.")
        run = run_create(guru, set_name=eval_set.name, total=total, eval_set=eval_set, user=user)
        enqueue_on_commit("evaluation.run", run_id=run.pk)
    return run


def run_cases(run: EvalRun, cases: Sequence[EvalCase], *, k: int = K, judge: bool = False,
              progress: Callable[[int, int], None] | None = None) -> EvalRun:
    """Answer and score every case, then store the figures; a crash marks the run FAILED and is re-raised."""
    scores: list[dict[str, Any]] = []
    unsettled = guru_unsettled(guru=run.guru)
    try:
        for done, case in enumerate(cases, start=1):
            scores.append(score_case(case, observe_case(run.guru, case, judge=judge), k=k).as_dict())
            EvalRun.objects.filter(pk=run.pk).update(done=done)
            if progress is not None:
                progress(done, len(cases))
    except Exception as exc:  # the run's boundary: it must never be left RUNNING
        EvalRun.objects.filter(pk=run.pk).update(state=RunState.FAILED, error=str(exc)[:2000],
                                                 finished_at=timezone.now(), results=scores)
        raise
    summary = summarise(scores, k=k)
    # Measured while the guru was still building (or it began to meanwhile): not comparable with a settled run.
    summary.update(sweep=sweep(scores), judge=judge, unsettled=unsettled or guru_unsettled(guru=run.guru))
    EvalRun.objects.filter(pk=run.pk).update(state=RunState.DONE, finished_at=timezone.now(), summary=summary,
                                             results=scores, done=len(cases))
    run.refresh_from_db()
    return run


def run_execute(run_id: int) -> None:
    """The worker's side of run_start: answer the set's questions (a run not RUNNING any more is left alone)."""
    run = EvalRun.objects.select_related("guru", "eval_set").filter(pk=run_id, state=RunState.RUNNING).first()
    if run is None:
        return
    if run.eval_set is None:
        EvalRun.objects.filter(pk=run.pk).update(state=RunState.FAILED, error="The set was deleted.",
                                                 finished_at=timezone.now())
        return
    run_cases(run, set_cases(run.eval_set))
