"""Dashboard pages for the list of gurus and for creating, editing and deleting one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from backend.core.errors import Conflict, NotFound
from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.gurus.forms import GuruForm
from backend.dashboard.gurus.selectors import (
    example_candidates,
    guru_deletion_summary,
    guru_overview_rows,
    guru_summary_card,
)
from backend.dashboard.gurus.summary_forms import SummaryBudgetForm
from backend.gurus.examples import (
    InvalidExample,
    guru_example_add,
    guru_example_edit,
    guru_example_move,
    guru_example_remove,
    guru_examples,
)
from backend.gurus.icons import guru_icon_clear, guru_icon_set, guru_icon_src
from backend.gurus.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, Guru
from backend.gurus.services import (
    MaintainerError,
    guru_create,
    guru_delete,
    guru_maintainer_add,
    guru_maintainer_remove,
    guru_update,
)


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/home.html", {"rows": guru_overview_rows(user=request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def guru_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = GuruForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in GuruForm.Meta.fields}
        try:
            guru = guru_create(user=request.user, **fields)
        except Conflict as exc:
            form.add_error("slug", str(exc))
        else:
            _apply_icon(guru, form)
            messages.success(request, f"Created {guru.name}. Add a data source so it has something to answer from.")
            return redirect("dashboard:sources", slug=guru.slug)
    return render(request, "dashboard/gurus/form.html", {"form": form, "creating": True})


@guru_view
@require_http_methods(["GET", "POST"])
def guru_edit(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = GuruForm(request.POST or None, request.FILES or None, instance=Guru.objects.get(pk=guru.pk))
    if request.method == "POST" and form.is_valid():
        changed = form.model_changes()
        try:
            guru = guru_update(guru=guru, **changed)
        except Conflict as exc:
            form.add_error("slug", str(exc))
        else:
            _apply_icon(guru, form)
            messages.success(request, "Saved." if form.changed_data else "Nothing changed.")
            return redirect("dashboard:guru-edit", slug=guru.slug)
    return overview_page(request, guru, form=form)


def overview_page(request: HttpRequest, guru: Guru, *, form: GuruForm | None = None,
                  budget_form: SummaryBudgetForm | None = None, status: int = 200) -> HttpResponse:
    """The Overview tab: the guru form, its summary card, example questions and maintainers."""
    form = form or GuruForm(instance=Guru.objects.get(pk=guru.pk))
    examples = guru_examples(guru=guru)
    card = guru_summary_card(guru=guru)
    budget_form = budget_form or SummaryBudgetForm(initial={"summary_token_budget": guru.summary_token_budget},
                                                   default=card.default_budget)
    context = {"form": form, "creating": False, "guru": guru, "icon_src": guru_icon_src(guru),
               "maintainers": guru.maintainers.order_by("username").only("id", "username", "email"),
               "examples": examples, "max_examples": MAX_EXAMPLES, "max_example_chars": MAX_EXAMPLE_CHARS,
               "candidates": example_candidates(guru=guru, published=[e.text for e in examples]),
               "summary_card": card, "budget_form": budget_form}
    return render(request, "dashboard/gurus/form.html", context, status=status)


def _examples_url(guru: Guru) -> str:
    return reverse("dashboard:guru-edit", args=[guru.slug]) + "#examples"


@guru_view
@require_POST
def example_add(request: HttpRequest, guru: Guru) -> HttpResponse:
    """Publish an example question: written by the maintainer, or picked from asked questions and edited."""
    try:
        example = guru_example_add(guru=guru, text=request.POST.get("text", "")[:5000])
    except InvalidExample as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, f"Published the example “{example.text}”: visitors see it now.")
    return redirect(_examples_url(guru))


@guru_view
@require_POST
def example_change(request: HttpRequest, guru: Guru, example_id: int) -> HttpResponse:
    """One example's buttons: save its wording, move it up or down, or remove it."""
    action = request.POST.get("action", "")
    try:
        if action == "save":
            guru_example_edit(guru=guru, example_id=example_id, text=request.POST.get("text", "")[:5000])
            messages.success(request, "Saved the example.")
        elif action in ("up", "down"):
            guru_example_move(guru=guru, example_id=example_id, offset=-1 if action == "up" else 1)
        elif action == "remove":
            guru_example_remove(guru=guru, example_id=example_id)
            messages.success(request, "Removed the example: visitors no longer see it.")
        else:
            messages.error(request, "Unknown action.")
    except (InvalidExample, NotFound) as exc:
        messages.error(request, exc.detail)
    return redirect(_examples_url(guru))


@guru_view
@require_http_methods(["GET", "POST"])
def guru_remove(request: HttpRequest, guru: Guru) -> HttpResponse:
    summary = guru_deletion_summary(guru=guru)
    if request.method == "POST":
        if request.POST.get("confirm_slug", "").strip() != guru.slug:
            messages.error(request, "Type the guru's slug to confirm the deletion.")
        else:
            name = guru.name
            guru_delete(guru=guru)
            messages.success(request, f"Deleted {name} and everything it held.")
            return redirect("dashboard:home")
    return render(request, "dashboard/gurus/delete.html", {"guru": guru, "summary": summary})


def _apply_icon(guru: Guru, form: GuruForm) -> None:
    if form.cleaned_data.get("icon_file"):
        guru_icon_set(guru=guru, upload=form.cleaned_data["icon_file"])
    elif form.cleaned_data.get("remove_icon"):
        guru_icon_clear(guru=guru)


@guru_view
@require_POST
def maintainer_add(request: HttpRequest, guru: Guru) -> HttpResponse:
    login = request.POST.get("login", "")[:254]
    try:
        user = guru_maintainer_add(guru=guru, login=login)
    except MaintainerError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, f"{user.get_username()} now maintains {guru.name}.")
    return redirect("dashboard:guru-edit", slug=guru.slug)


@guru_view
@require_POST
def maintainer_remove(request: HttpRequest, guru: Guru, user_id: int) -> HttpResponse:
    try:
        guru_maintainer_remove(guru=guru, user_id=user_id)
    except MaintainerError as exc:
        messages.error(request, exc.detail)
        return redirect("dashboard:guru-edit", slug=guru.slug)
    if user_id == request.user.pk and not request.user.is_superuser:
        messages.success(request, f"You no longer maintain {guru.name}.")
        return redirect("dashboard:home")
    messages.success(request, "Removed the maintainer.")
    return redirect("dashboard:guru-edit", slug=guru.slug)
