"""Evaluation runs: start one, the last runs side by side, one run in full with the threshold explorer."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from backend.answering.selectors import thresholds_for
from backend.core.errors import Conflict, RequestError
from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.evaluation.comparison import figure_rows, previous_runs
from backend.dashboard.evaluation.explorer import sweep_chart, sweep_points
from backend.dashboard.evaluation.forms import ThresholdForm
from backend.dashboard.evaluation.run_report import calibration_rows, category_rows, latency_rows, question_rows
from backend.dashboard.evaluation.selectors import (
    MAX_PROGRESS_IDS,
    SHOWN_RUNS,
    previous_run,
    recent_runs,
    run_get,
    running_run,
    runs_progress,
    set_get,
)
from backend.evaluation.models import EvalRun, RunState
from backend.evaluation.runner import run_start
from backend.evaluation.services import threshold_apply
from backend.gurus.models import Guru


@guru_view
@require_POST
def run_start_view(request: AuthenticatedHttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    """Start a run of the set in the worker and follow it on its page; one run at a time per guru."""
    eval_set = set_get(guru=guru, set_id=set_id)
    try:
        run = run_start(guru, eval_set=eval_set, user=request.user)
    except Conflict:
        current = running_run(guru=guru)
        messages.error(request, "An evaluation of this guru is already running: another starts when it has "
                                "finished.")
        if current is not None:
            return redirect("dashboard:evaluation-run", slug=guru.slug, run_id=current.pk)
        return redirect("dashboard:evaluation-set", slug=guru.slug, set_id=eval_set.pk)
    except RequestError as exc:
        messages.error(request, exc.detail)
        return redirect("dashboard:evaluation-set", slug=guru.slug, set_id=eval_set.pk)
    messages.success(request, f"Started an evaluation of {guru.name} on “{eval_set.name}” ({run.total} "
                              f"question{'' if run.total == 1 else 's'}).")
    return redirect("dashboard:evaluation-run", slug=guru.slug, run_id=run.pk)


@guru_view
@require_GET
def runs(request: HttpRequest, guru: Guru) -> HttpResponse:
    """The last runs side by side: one column per run, one row per figure with its change."""
    recent = recent_runs(guru=guru)
    shown = recent[:SHOWN_RUNS]
    rows = figure_rows(shown, previous_runs(recent))
    return render(request, "dashboard/evaluation/runs.html", {
        "guru": guru, "runs": shown, "rows": rows, "latest": recent[0].pk if recent else "",
        "progress_url": reverse("dashboard:evaluation-progress", args=[guru.slug])})


def run_page(request: HttpRequest, guru: Guru, run: EvalRun, *, form: ThresholdForm | None = None,
             status: int = 200) -> HttpResponse:
    _, current = thresholds_for(guru)
    before = previous_run(run=run) if run.state == RunState.DONE else None
    points = sweep_points(run.summary, current=current, run_threshold=run.trust_threshold)
    wrong_only = request.GET.get("wrong") == "1"
    context = {
        "guru": guru, "run": run, "figures": figure_rows([run], {run.pk: before}), "before": before,
        "calibration": calibration_rows(run.summary), "categories": category_rows(run.summary),
        "latency": latency_rows(run.summary), "questions": question_rows(run.results, wrong_only=wrong_only),
        "wrong_only": wrong_only, "question_count": len(run.results) if isinstance(run.results, list) else 0,
        "points": points, "chart": sweep_chart(points, current=current), "current": current,
        "form": form or ThresholdForm(thresholds=[p.threshold for p in points], current=current),
        "progress_url": reverse("dashboard:evaluation-progress", args=[guru.slug])}
    return render(request, "dashboard/evaluation/run.html", context, status=status)


@guru_view
@require_GET
def run_detail(request: HttpRequest, guru: Guru, run_id: int) -> HttpResponse:
    return run_page(request, guru, run_get(guru=guru, run_id=run_id))


@guru_view
@require_POST
def threshold_apply_view(request: HttpRequest, guru: Guru, run_id: int) -> HttpResponse:
    """Give the guru the trust threshold chosen from this run's sweep."""
    run = run_get(guru=guru, run_id=run_id)
    _, old = thresholds_for(guru)
    points = sweep_points(run.summary, current=old, run_threshold=run.trust_threshold)
    form = ThresholdForm(request.POST, thresholds=[p.threshold for p in points], current=old)
    if not form.is_valid():
        return run_page(request, guru, run, form=form, status=400)
    new = form.cleaned_data["threshold"]
    try:
        previous = threshold_apply(guru, new)
    except RequestError as exc:
        form.add_error("threshold", exc.detail)
        return run_page(request, guru, run, form=form, status=400)
    origin = " (the instance default)" if previous is None else ""
    messages.success(request, f"Trust threshold of {guru.name} changed from {old:.2f}{origin} to {new:.2f}. "
                              "Answers use it from now on; run the set again to measure it.")
    return redirect(reverse("dashboard:evaluation-run", args=[guru.slug, run.pk]) + "#explorer")


@guru_view
@require_GET
def runs_progress_json(request: HttpRequest, guru: Guru) -> JsonResponse:
    """?ids=1,2: those runs' state and counts, and the guru's newest run."""
    raw = [part.strip() for value in request.GET.getlist("ids") for part in value.split(",") if part.strip()]
    if len(raw) > MAX_PROGRESS_IDS or not all(part.isdigit() and len(part) < 19 for part in raw):
        return JsonResponse({"code": "invalid", "detail": f"ids must be at most {MAX_PROGRESS_IDS} run ids."},
                            status=400)
    response = JsonResponse(runs_progress(guru=guru, ids=[int(part) for part in raw]))
    response["Cache-Control"] = "no-store"
    return response
