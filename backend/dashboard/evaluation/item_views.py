"""The questions of an evaluation set: add, edit and delete one, and add questions ticked on the Questions tab."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from backend.core.errors import AppError
from backend.dashboard.access import guru_view
from backend.dashboard.evaluation.forms import ItemForm, SeedForm, SeedIdsField
from backend.dashboard.evaluation.selectors import item_get, seed_questions, set_choices, set_get
from backend.dashboard.evaluation.services import (
    eval_item_add,
    eval_item_delete,
    eval_item_update,
    eval_set_get_or_create,
)
from backend.dashboard.evaluation.views import set_page
from backend.evaluation.models import EvalItem
from backend.evaluation.sets import set_add_questions
from backend.gurus.models import Guru

ITEM_FIELDS = ("question", "category", "refusal_kind", "expected_sources", "expected_facts", "history")


def _back(guru: Guru, set_id: int, anchor: str = "") -> HttpResponse:
    response = redirect("dashboard:evaluation-set", slug=guru.slug, set_id=set_id)
    response["Location"] += anchor
    return response


@guru_view
@require_POST
def item_add(request: HttpRequest, guru: Guru, set_id: int) -> HttpResponse:
    eval_set = set_get(guru=guru, set_id=set_id)
    form = ItemForm(request.POST, prefix="item")
    if form.is_valid():
        try:
            item = eval_item_add(eval_set=eval_set, case=form.case())
        except AppError as exc:
            form.add_error(None, exc.detail)
        else:
            messages.success(request, f"Added “{item.question[:80]}”.")
            return _back(guru, eval_set.pk, f"#item-{item.pk}")
    return set_page(request, guru, eval_set, item_form=form, status=400)


@guru_view
@require_http_methods(["GET", "POST"])
def item_edit(request: HttpRequest, guru: Guru, set_id: int, item_id: int) -> HttpResponse:
    eval_set = set_get(guru=guru, set_id=set_id)
    item = item_get(eval_set=eval_set, item_id=item_id)
    if request.method == "POST":
        form = ItemForm(request.POST)
        if form.is_valid():
            eval_item_update(item=item, case=form.case())
            messages.success(request, "Saved the question.")
            return _back(guru, eval_set.pk, f"#item-{item.pk}")
    else:
        form = ItemForm(initial=ItemForm.initial_for({name: getattr(item, name) for name in ITEM_FIELDS}))
    status = 400 if form.is_bound else 200
    return render(request, "dashboard/evaluation/item.html", {"guru": guru, "set": eval_set, "item": item,
                                                              "form": form}, status=status)


@guru_view
@require_POST
def item_delete(request: HttpRequest, guru: Guru, set_id: int, item_id: int) -> HttpResponse:
    eval_set = set_get(guru=guru, set_id=set_id)
    item: EvalItem = item_get(eval_set=eval_set, item_id=item_id)
    eval_item_delete(item=item)
    messages.success(request, f"Deleted “{item.question[:80]}”.")
    return _back(guru, eval_set.pk, "#items")


@guru_view
@require_http_methods(["GET", "POST"])
def seed(request: HttpRequest, guru: Guru) -> HttpResponse:
    """GET (the rows ticked on the Questions tab) asks which set; POST adds them to it as draft items."""
    sets = set_choices(guru=guru)
    data = request.POST if request.method == "POST" else request.GET
    form = SeedForm(data, sets=sets)
    if request.method == "POST" and form.is_valid():
        return _seed(request, guru, form)
    problem = ""
    try:
        ids = SeedIdsField().clean(data.getlist("ids"))
    except ValidationError as exc:
        ids, problem = [], exc.messages[0]
    questions = seed_questions(guru=guru, ids=ids)
    if not questions and not problem:
        problem = "None of the ticked questions can be added: only this guru's answered questions can."
    if request.method == "GET":
        form = SeedForm(initial={"ids": [q.pk for q in questions]}, sets=sets)
    status = 200 if request.method == "GET" and not problem else 400
    context = {"guru": guru, "form": form, "questions": questions, "problem": problem}
    return render(request, "dashboard/evaluation/seed.html", context, status=status)


def _seed(request: HttpRequest, guru: Guru, form: SeedForm) -> HttpResponse:
    set_id = form.chosen_set_id()
    eval_set = set_get(guru=guru, set_id=set_id) if set_id else eval_set_get_or_create(
        guru=guru, name=form.cleaned_data["new_name"])
    try:
        added, present = set_add_questions(eval_set, form.cleaned_data["ids"])
    except AppError as exc:
        messages.error(request, exc.detail)
        return _back(guru, eval_set.pk)
    already = f" ({present} {'was' if present == 1 else 'were'} in it already)" if present else ""
    if added:
        messages.success(request, f"Added {added} question{'' if added == 1 else 's'} to “{eval_set.name}” as "
                                  f"drafts{already}: their expected sources are what the answers cited. Check them, "
                                  "and add the facts a right answer states.")
    elif present:
        messages.info(request, f"“{eval_set.name}” already asks the ticked question{'' if present == 1 else 's'}.")
    else:
        messages.error(request, "None of the ticked questions could be added: only answered questions of this guru "
                                "can be.")
    return _back(guru, eval_set.pk, "#items")
