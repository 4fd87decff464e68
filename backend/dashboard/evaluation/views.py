"""The Evaluation tab: the guru's sets (create, import JSONL, export, delete) and one set's page."""

from __future__ import annotations

import re

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from backend.core.errors import Conflict
from backend.dashboard.access import guru_view
from backend.dashboard.evaluation.forms import ItemForm, SetCreateForm, SetImportForm
from backend.dashboard.evaluation.selectors import (
    running_run,
    set_get,
    set_items,
    set_names,
    set_rows,
    set_runs,
)
from backend.dashboard.evaluation.services import eval_set_create, eval_set_delete
from backend.evaluation.models import EvalSet
from backend.evaluation.sets import SetFileError, set_export, set_import
from backend.gurus.models import Guru

SET_RUNS_SHOWN = 5


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def index_page(request: HttpRequest, guru: Guru, *, create_form: SetCreateForm | None = None,
               import_form: SetImportForm | None = None, status: int = 200) -> HttpResponse:
    context = {"guru": guru, "rows": set_rows(guru=guru), "names": set_names(guru=guru),
               "create_form": create_form or SetCreateForm(prefix="create"),
               "import_form": import_form or SetImportForm(prefix="import"), "running": running_run(guru=guru)}
    return render(request, "dashboard/evaluation/index.html", context, status=status)


def set_page(request: HttpRequest, guru: Guru, eval_set: EvalSet, *, item_form: ItemForm | None = None,
             import_form: SetImportForm | None = None, status: int = 200) -> HttpResponse:
    context = {"guru": guru, "set": eval_set, "items": list(set_items(eval_set=eval_set)),
               "item_form": item_form or ItemForm(prefix="item"),
               "import_form": import_form or SetImportForm(prefix="import", fixed_name=eval_set.name),
               "running": running_run(guru=guru), "runs": set_runs(eval_set=eval_set, limit=SET_RUNS_SHOWN)}
    return render(request, "dashboard/evaluation/set.html", context, status=status)


@guru_view
@require_GET
def evaluation(request: HttpRequest, guru: Guru) -> HttpResponse:
    return index_page(request, guru)


@guru_view
@require_POST
def set_create(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = SetCreateForm(request.POST, prefix="create")
    if form.is_valid():
        try:
            eval_set = eval_set_create(guru=guru, name=form.cleaned_data["name"])
        except Conflict as exc:
            form.add_error("name", exc.detail)
        else:
            messages.success(request, f"Created the set “{eval_set.name}”. Add its questions below, or import them.")
            return redirect("dashboard:evaluation-set", slug=guru.slug, set_id=eval_set.pk)
    return index_page(request, guru, create_form=form, status=400)


def _import(request: HttpRequest, guru: Guru, form: SetImportForm) -> EvalSet | None:
    """Import the form's cases; a file error (line-numbered) or a full set becomes a form error."""
    if not form.is_valid():
        return None
    replace = form.cleaned_data["mode"] == "replace"
    try:
        imported = set_import(guru, form.set_name(), form.cases(), replace=replace)
    except SetFileError as exc:
        form.add_error(None, exc.detail)
        return None
    skipped = f", {_plural(imported.skipped, 'question')} left out as already asked" if imported.skipped else ""
    messages.success(request, f"{'Replaced the questions of' if replace else 'Imported into'} "
                              f"“{imported.eval_set.name}”: {_plural(imported.added, 'question')}"
                              f"{' now' if replace else ' added'}{skipped}.")
    return imported.eval_set


@guru_view
@require_POST
def import_view(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = SetImportForm(request.POST, request.FILES, prefix="import")
    eval_set = _import(request, guru, form)
    if eval_set is None:
        return index_page(request, guru, import_form=form, status=400)
    return redirect("dashboard:evaluation-set", slug=guru.slug, set_id=eval_set.pk)


@guru_view
@require_GET
def set_detail(request: HttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    return set_page(request, guru, set_get(guru=guru, set_id=set_id))


@guru_view
@require_POST
def set_import_view(request: HttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    eval_set = set_get(guru=guru, set_id=set_id)
    form = SetImportForm(request.POST, request.FILES, prefix="import", fixed_name=eval_set.name)
    if _import(request, guru, form) is None:
        return set_page(request, guru, eval_set, import_form=form, status=400)
    return redirect("dashboard:evaluation-set", slug=guru.slug, set_id=eval_set.pk)


def _file_name(guru: Guru, eval_set: EvalSet) -> str:
    # Only safe characters reach the header: a set's name is free text.
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", eval_set.name).strip("-.") or "set"
    return f"{guru.slug}-{stem[:60]}.jsonl"


@guru_view
@require_GET
def set_export_view(request: HttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    """The set as a JSONL download that `import` reads back unchanged."""
    eval_set = set_get(guru=guru, set_id=set_id)
    response = HttpResponse(set_export(eval_set), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_file_name(guru, eval_set)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@guru_view
@require_http_methods(["GET", "POST"])
def set_delete(request: HttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    """GET asks to confirm; POST deletes the set and its questions (its runs stay, under its name)."""
    eval_set = set_get(guru=guru, set_id=set_id)
    if request.method == "POST":
        name = eval_set.name
        eval_set_delete(eval_set=eval_set)
        messages.success(request, f"Deleted the set “{name}”. Its runs stay on the Runs page.")
        return redirect("dashboard:evaluation", slug=guru.slug)
    context = {"guru": guru, "set": eval_set, "item_count": eval_set.items.count(),
               "run_count": eval_set.runs.count()}
    return render(request, "dashboard/evaluation/set_delete.html", context)
