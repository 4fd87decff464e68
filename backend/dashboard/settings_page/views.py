"""Settings pages: a guru's overrides (maintainers) and the instance-wide settings and chat provider (staff)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from backend.core.selectors import settings_get
from backend.core.services import settings_update
from backend.dashboard.access import guru_view, staff_view
from backend.dashboard.settings_page import selectors
from backend.dashboard.settings_page.forms import GuruSettingsForm, InstanceSettingsForm
from backend.dashboard.settings_page.llm_form import LlmProviderForm
from backend.dashboard.settings_page.services import ConnectionReport, llm_connection_test, sources_reindex_all
from backend.gurus.models import Guru
from backend.gurus.services import guru_update
from backend.sources.indexing import chunking_config

SPLIT_CHANGED = "split-changed"


@guru_view
@require_http_methods(["GET", "POST"])
def guru_settings(request: HttpRequest, guru: Guru) -> HttpResponse:
    # A fresh instance: an invalid form must not leave its values on the guru the page header shows.
    form = GuruSettingsForm(request.POST or None, instance=Guru.objects.get(pk=guru.pk))
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        if changed:
            guru_update(guru=guru, **changed)
        messages.success(request, "Saved." if changed else "Nothing changed.")
        _warn(request, form.warnings)
        return redirect("dashboard:guru-settings", slug=guru.slug)
    context = {
        "guru": guru, "form": form, "thresholds": selectors.effective_thresholds(guru),
        "providers": selectors.guru_provider_facts(guru)
    }
    return render(request, "dashboard/settings/guru.html", context)


@staff_view
@require_http_methods(["GET", "POST"])
def instance_settings(request: HttpRequest) -> HttpResponse:
    form = InstanceSettingsForm(request.POST or None, instance=settings_get())
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        if _saved(form, changed):
            if form.split_changed:
                messages.warning(request, "Split sizes changed. Existing chunks keep the old sizes until their "
                                          "sources are re-indexed: use “Re-index every source” below.")
                return redirect(f"{reverse('dashboard:settings')}?{SPLIT_CHANGED}=1#reindex")
            messages.success(request, "Saved." if changed else "Nothing changed.")
            return redirect("dashboard:settings")
    return _instance_page(request, form, LlmProviderForm(instance=settings_get()))


@staff_view
@require_http_methods(["GET", "POST"])
def llm_settings(request: HttpRequest) -> HttpResponse:
    """Save the chat provider; every process answers with it within a few seconds (core/llm_config.py)."""
    if request.method == "GET":  # the form lives on the settings page
        return redirect(f"{reverse('dashboard:settings')}#llm")
    form = LlmProviderForm(request.POST, instance=settings_get())
    if form.is_valid():
        changed = form.changes()
        if _saved(form, changed):
            _warn(request, form.warnings)
            messages.success(request, "Chat provider saved." if changed else "Nothing changed.")
            return redirect(f"{reverse('dashboard:settings')}#llm")
    return _instance_page(request, InstanceSettingsForm(instance=settings_get()), form)


@staff_view
@require_POST
def llm_test(request: HttpRequest) -> HttpResponse:
    """One real call with the form's values (the saved key when none is typed): JSON for the page's script."""
    form = LlmProviderForm(request.POST, instance=settings_get(), check_model=False)
    if form.is_valid():
        report = llm_connection_test(form.candidate())
    else:
        problems = [f"{form.fields[name].label if name in form.fields else 'Form'}: {' '.join(str(e) for e in errors)}"
                    for name, errors in form.errors.items()]
        report = ConnectionReport(False, " ".join(problems))
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"ok": report.ok, "message": report.message, "latency_ms": report.latency_ms,
                             "models": list(report.models)})
    # Without the script the button submits the form here: show the result (a typed key must be typed again).
    return _instance_page(request, InstanceSettingsForm(instance=settings_get()), form, test=report)


def _instance_page(request: HttpRequest, form: InstanceSettingsForm, llm_form: LlmProviderForm,
                   test: ConnectionReport | None = None) -> HttpResponse:
    sources, gurus = selectors.source_totals()
    context = {
        "form": form, "llm_form": llm_form, "llm_env": llm_form.env, "llm_test": test,
        "defaults": form.defaults, "in_force": chunking_config(), "stored": settings_get(),
        "providers": selectors.providers_in_use(), "llm_facts": selectors.llm_facts(),
        "source_count": sources, "guru_count": gurus, "split_changed": SPLIT_CHANGED in request.GET,
    }
    return render(request, "dashboard/settings/instance.html", context)


def _saved(form: InstanceSettingsForm | LlmProviderForm, changed: dict[str, object]) -> bool:
    """Save the changed settings; False (with the model's error on the form) when a value is refused."""
    try:
        if changed:
            settings_update(**changed)
    except ValidationError as exc:
        form.add_error(None, exc)
        return False
    return True


def _warn(request: HttpRequest, warnings: list[str]) -> None:
    for warning in warnings:
        messages.warning(request, warning)


@staff_view
@require_POST
def reindex_all(request: HttpRequest) -> HttpResponse:
    sources, gurus = sources_reindex_all()
    if sources:
        messages.success(request, f"Re-indexing {sources} source{'s' if sources != 1 else ''} of {gurus} "
                                  f"guru{'s' if gurus != 1 else ''}; their status shows the progress.")
    else:
        messages.info(request, "There are no sources to re-index.")
    return redirect("dashboard:settings")
