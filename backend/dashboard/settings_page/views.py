"""Settings pages: a guru's overrides (maintainers) and the instance-wide settings (staff)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from backend.core.selectors import settings_get
from backend.core.services import settings_update
from backend.dashboard.access import guru_view, staff_view
from backend.dashboard.settings_page import selectors
from backend.dashboard.settings_page.forms import GuruSettingsForm, InstanceSettingsForm
from backend.dashboard.settings_page.services import sources_reindex_all
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
        try:
            if changed:
                settings_update(**changed)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            _warn(request, form.warnings)
            if form.split_changed:
                messages.warning(request, "Split sizes changed. Existing chunks keep the old sizes until their "
                                          "sources are re-indexed: use “Re-index every source” below.")
                return redirect(f"{reverse('dashboard:settings')}?{SPLIT_CHANGED}=1#reindex")
            messages.success(request, "Saved." if changed else "Nothing changed.")
            return redirect("dashboard:settings")
    sources, gurus = selectors.source_totals()
    context = {
        "form": form, "defaults": form.defaults, "in_force": chunking_config(), "stored": settings_get(),
        "providers": selectors.providers_in_use(),
        "source_count": sources, "guru_count": gurus, "split_changed": SPLIT_CHANGED in request.GET,
    }
    return render(request, "dashboard/settings/instance.html", context)


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
