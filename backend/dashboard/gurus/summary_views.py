"""The Overview tab's Summary card: set the guru's token budget, draft a suggestion from the summary, approve it."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from backend.core.selectors import settings_get
from backend.dashboard.access import guru_view
from backend.dashboard.gurus.summary_forms import SuggestionForm, SummaryBudgetForm
from backend.dashboard.gurus.summary_services import (
    InvalidBudget,
    InvalidSuggestion,
    example_slots,
    guru_suggestion_approve,
    guru_summary_budget_set,
)
from backend.dashboard.gurus.views import overview_page
from backend.gurus.examples import InvalidExample
from backend.gurus.models import MAX_EXAMPLES, ExampleQuestion, Guru
from backend.pipeline.errors import PermanentServiceError, ServiceError
from backend.pipeline.suggest_rules import OFFLINE_DRAFTER
from backend.sources.suggest import NoSummaryYet, guru_suggest

logger = logging.getLogger(__name__)
MESSAGE_LIMIT = 300


def _card_url(guru: Guru) -> str:
    return reverse("dashboard:guru-edit", args=[guru.slug]) + "#summary"


@guru_view
@require_POST
def summary_budget(request: HttpRequest, guru: Guru) -> HttpResponse:
    form = SummaryBudgetForm(request.POST, default=settings_get().summary_token_budget)
    if form.is_valid():
        budget = form.cleaned_data["summary_token_budget"]
        try:
            guru_summary_budget_set(guru=guru, budget=budget)
        except InvalidBudget as exc:
            form.add_error("summary_token_budget", exc.detail)
        else:
            messages.success(request, "Saved: this guru now uses the instance default summary budget."
                             if budget is None else f"Saved: this guru's summaries may spend {budget:,} tokens.")
            return redirect(_card_url(guru))
    return overview_page(request, guru, budget_form=form, status=400)


def _drafter(drafted_by: str) -> str:
    # The rules are never passed off as a model: the page says the draft was picked, not written.
    return "rules (sentences and terms picked from the summary, no language model)" \
        if drafted_by == OFFLINE_DRAFTER else drafted_by


def _draft_page(request: HttpRequest, guru: Guru, form: SuggestionForm, status: int = 200) -> HttpResponse:
    context = {"guru": guru, "form": form, "slots": example_slots(guru=guru), "max_examples": MAX_EXAMPLES,
               "existing": ExampleQuestion.objects.filter(guru=guru).count(),
               "drafted_by": _drafter(str(form["drafted_by"].value() or ""))}
    return render(request, "dashboard/gurus/suggestion.html", context, status=status)


@guru_view
@require_POST
def summary_suggest(request: HttpRequest, guru: Guru) -> HttpResponse:
    """Draft domain knowledge and example questions from the guru's summary, for the maintainer to edit."""
    try:
        suggestion = guru_suggest(guru=guru)
    except NoSummaryYet:
        messages.error(request, f"{guru.name} has no summary yet, so there is nothing to draft from. Summaries are "
                                "written after sources are indexed; the Sources tab shows their progress.")
        return redirect(_card_url(guru))
    except ServiceError as exc:
        logger.warning("suggest failed for guru %s: %s", guru.pk, exc)
        messages.error(request, _failure(exc))
        return redirect(_card_url(guru))
    form = SuggestionForm(initial={"domain_knowledge": suggestion.domain_knowledge,
                                   "drafted_by": suggestion.drafted_by}, questions=suggestion.questions)
    return _draft_page(request, guru, form)


def _failure(exc: ServiceError) -> str:
    if isinstance(exc, PermanentServiceError):
        return f"The chat model could not draft a suggestion: {str(exc)[:MESSAGE_LIMIT]}"
    return "The chat model did not answer in time; try Suggest again in a minute."


@guru_view
@require_POST
def summary_approve(request: HttpRequest, guru: Guru) -> HttpResponse:
    """Save the approved draft: the domain knowledge if ticked, the ticked questions after the existing examples."""
    form = SuggestionForm(request.POST)
    if form.is_valid():
        try:
            report = guru_suggestion_approve(guru=guru, domain_knowledge=form.domain_knowledge_value(),
                                             questions=form.approved_questions())
        except (InvalidSuggestion, InvalidExample) as exc:
            form.add_error(None, exc.detail)
        else:
            parts = ["Saved the domain knowledge."] if report.domain_knowledge_saved else []
            if report.added:
                parts.append(f"Added {len(report.added)} example question{'s' if len(report.added) != 1 else ''}: "
                             "visitors see them now.")
            if report.already_there:
                parts.append(f"{len(report.already_there)} already were examples.")
            messages.success(request, " ".join(parts) or "Nothing was approved.")
            return redirect(reverse("dashboard:guru-edit", args=[guru.slug]) + "#examples")
    return _draft_page(request, guru, form, status=400)
