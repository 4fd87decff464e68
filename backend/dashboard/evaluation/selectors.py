"""Read paths of the Evaluation tab: the guru's sets with their last run, one set's items, runs, seeding."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.http import Http404
from django.shortcuts import get_object_or_404

from backend.answering.feedback import MAX_ID
from backend.answering.models import AnswerState, Question
from backend.evaluation.models import EvalItem, EvalRun, EvalSet, RunState
from backend.gurus.models import Guru

RECENT_RUNS = 50
"""Runs read for the side-by-side page: the shown ones and, among the older, each one's previous run of its set."""
SHOWN_RUNS = 5
MAX_PROGRESS_IDS = 10


@dataclass(frozen=True)
class SetRow:
    """A set as the tab lists it: how many questions, and its last run (if any)."""

    eval_set: EvalSet
    item_count: int
    last_run_id: int | None
    last_run_at: datetime | None
    last_run_state: str


def _id(value: int) -> int:
    if not 0 < value <= MAX_ID:
        raise Http404("No such row.")
    return value


def set_rows(*, guru: Guru) -> list[SetRow]:
    """The guru's sets by name, with counts and last runs, in one query."""
    last = EvalRun.objects.filter(eval_set=OuterRef("pk")).order_by("-started_at", "-pk")
    sets = (EvalSet.objects.filter(guru=guru)
            .annotate(item_count=Count("items"), last_run_id=Subquery(last.values("pk")[:1]),
                      last_run_at=Subquery(last.values("started_at")[:1]),
                      last_run_state=Subquery(last.values("state")[:1]))
            .order_by("name"))
    return [SetRow(s, s.item_count, s.last_run_id, s.last_run_at, s.last_run_state or "")
            for s in sets]


def set_choices(*, guru: Guru) -> list[tuple[int, str]]:
    return list(EvalSet.objects.filter(guru=guru).order_by("name").values_list("pk", "name"))


def set_names(*, guru: Guru) -> list[str]:
    return list(EvalSet.objects.filter(guru=guru).order_by("name").values_list("name", flat=True))


def set_get(*, guru: Guru, set_id: int) -> EvalSet:
    """One set of the guru; another guru's set is a 404."""
    return get_object_or_404(EvalSet, guru=guru, pk=_id(set_id))


def set_items(*, eval_set: EvalSet) -> QuerySet[EvalItem]:
    return eval_set.items.order_by("position", "pk")


def item_get(*, eval_set: EvalSet, item_id: int) -> EvalItem:
    return get_object_or_404(EvalItem.objects.select_related("eval_set"), eval_set=eval_set, pk=_id(item_id))


def seed_questions(*, guru: Guru, ids: list[int]) -> list[Question]:
    """The ticked questions that can become items: the guru's answered ones (as set_add_questions takes)."""
    return list(Question.objects.filter(guru=guru, pk__in=ids, state=AnswerState.COMPLETE)
                .only("id", "question", "user_question", "out_of_context", "created_at")
                .order_by("created_at", "id"))


def running_run(*, guru: Guru) -> EvalRun | None:
    return EvalRun.objects.filter(guru=guru, state=RunState.RUNNING).defer("results", "summary").first()


def set_runs(*, eval_set: EvalSet, limit: int) -> list[EvalRun]:
    return list(EvalRun.objects.filter(eval_set=eval_set).defer("results", "summary")
                .order_by("-started_at", "-pk")[:limit])


def recent_runs(*, guru: Guru) -> list[EvalRun]:
    """The guru's newest runs without their per-question results (the side-by-side page reads only figures)."""
    return list(EvalRun.objects.filter(guru=guru).defer("results").order_by("-started_at", "-pk")[:RECENT_RUNS])


def run_get(*, guru: Guru, run_id: int) -> EvalRun:
    return get_object_or_404(EvalRun, guru=guru, pk=_id(run_id))


def previous_run(*, run: EvalRun) -> EvalRun | None:
    """The finished run of the same set before this one, to compare against."""
    same = {"eval_set_id": run.eval_set_id} if run.eval_set_id else {"eval_set__isnull": True,
                                                                       "set_name": run.set_name}
    return (EvalRun.objects.filter(guru_id=run.guru_id, state=RunState.DONE, **same)
            .filter(started_at__lte=run.started_at).exclude(pk=run.pk).defer("results")
            .order_by("-started_at", "-pk").first())


def runs_progress(*, guru: Guru, ids: list[int]) -> dict[str, object]:
    """State and counts of the asked runs, and the guru's newest run (a page sees runs started elsewhere)."""
    rows = EvalRun.objects.filter(guru=guru, pk__in=ids[:MAX_PROGRESS_IDS]).values("pk", "state", "done", "total")
    latest = EvalRun.objects.filter(guru=guru).order_by("-started_at", "-pk").values_list("pk", flat=True).first()
    return {"runs": [{"id": r["pk"], "state": r["state"], "done": r["done"], "total": r["total"],
                      "text": progress_text(r["state"], r["done"], r["total"])} for r in rows],
            "latest": latest}


def progress_text(state: str, done: int, total: int) -> str:
    return f"answering {done}/{total}" if state == RunState.RUNNING else str(RunState(state).label).lower()
