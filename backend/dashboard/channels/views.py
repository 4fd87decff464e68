"""Dashboard pages for a guru's channels: API keys, widget ids with snippet and live preview (Slack: slack_views)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from backend.api.services import IssuedKey, api_key_create, api_key_revoke
from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.channels.forms import SCOPE_ALL, APIKeyForm, WidgetIdForm, widget_form_initial
from backend.dashboard.channels.selectors import (
    api_key_revocable,
    api_key_rows,
    guru_widget_id,
    guru_widget_ids,
    preview_widget,
)
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from backend.widget.services import embed_snippet, widget_id_create, widget_id_delete, widget_id_update


def _script_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("widget:script"))


def _channels_page(request: AuthenticatedHttpRequest, guru: Guru, *, key_form: APIKeyForm | None = None,
                   widget_form: WidgetIdForm | None = None, issued: IssuedKey | None = None) -> HttpResponse:
    script_url = _script_url(request)
    widgets = list(guru_widget_ids(guru=guru))
    context: dict[str, Any] = {
        "guru": guru,
        "key_rows": api_key_rows(guru=guru, user=request.user),
        "key_form": key_form or APIKeyForm(),
        "widgets": widgets,
        "widget_rows": [(widget, embed_snippet(script_url=script_url, key=widget.key)) for widget in widgets],
        "widget_form": widget_form or WidgetIdForm(),
        "preview": preview_widget(widgets, request.GET.get("preview")),
        "script_url": script_url,
        "api_base": request.build_absolute_uri("/").rstrip("/"),
        "issued": issued,
    }
    return render(request, "dashboard/channels/channels.html", context)


@guru_view
@require_GET
def channels(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    return _channels_page(request, guru)


@guru_view
@never_cache  # the one response that carries a new key's secret must not be kept by any cache
@require_http_methods(["GET", "POST"])
def apikey_create(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    """POST: issue a key and show it in this response only; it is never stored, so a reload cannot show it."""
    if request.method == "GET":
        return redirect("dashboard:channels", slug=guru.slug)
    form = APIKeyForm(request.POST)
    if not form.is_valid():
        return _channels_page(request, guru, key_form=form)
    data = form.cleaned_data
    issued = api_key_create(user=request.user, name=data["name"], rate_limit_per_minute=data["rate_limit_per_minute"],
                            guru=None if data["scope"] == SCOPE_ALL else guru)
    return _channels_page(request, guru, issued=issued)


@guru_view
@require_POST
def apikey_revoke(request: AuthenticatedHttpRequest, guru: Guru, pk: int) -> HttpResponse:
    key = api_key_revocable(guru=guru, user=request.user, pk=pk)
    api_key_revoke(api_key=key)
    messages.success(request, f"Revoked “{key.name}” ({key.prefix}…): requests with it now get 401.")
    return redirect(reverse("dashboard:channels", args=[guru.slug]) + "#api-keys")


def _widget_url(guru: Guru, widget: WidgetId) -> str:
    return reverse("dashboard:channels", args=[guru.slug]) + f"?preview={widget.pk}#widget-{widget.pk}"


@guru_view
@require_http_methods(["GET", "POST"])
def widget_create(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    if request.method == "GET":
        return redirect("dashboard:channels", slug=guru.slug)
    form = WidgetIdForm(request.POST)
    if not form.is_valid():
        return _channels_page(request, guru, widget_form=form)
    widget = widget_id_create(guru=guru, **form.cleaned_data)
    messages.success(request, "Widget id created. Copy its snippet, or try it in the preview on this page.")
    return redirect(_widget_url(guru, widget))


@guru_view
@require_http_methods(["GET", "POST"])
def widget_edit(request: HttpRequest, guru: Guru, pk: int) -> HttpResponse:
    widget = guru_widget_id(guru=guru, pk=pk)
    initial = {"name": widget.name, "allowed_origins": widget_form_initial(widget.allowed_origins),
               "rate_limit_per_minute": widget.rate_limit_per_minute,
               "per_ip_rate_limit_per_minute": widget.per_ip_rate_limit_per_minute, "active": widget.active}
    form = WidgetIdForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        widget_id_update(widget=widget, **form.cleaned_data)
        messages.success(request, "Widget id saved.")
        return redirect(_widget_url(guru, widget))
    snippet = embed_snippet(script_url=_script_url(request), key=widget.key)
    return render(request, "dashboard/channels/widget_edit.html",
                  {"guru": guru, "widget": widget, "form": form, "snippet": snippet})


@guru_view
@require_POST
def widget_delete(request: HttpRequest, guru: Guru, pk: int) -> HttpResponse:
    widget = guru_widget_id(guru=guru, pk=pk)
    label = widget.name or f"{widget.key[:8]}…"
    widget_id_delete(widget=widget)
    messages.success(request, f"Deleted widget id “{label}”: sites embedding it stop working now.")
    return redirect(reverse("dashboard:channels", args=[guru.slug]) + "#widgets")
