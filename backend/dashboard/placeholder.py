"""Temporary page for dashboard areas under construction in this session (removed before commit of the issue)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from backend.dashboard.access import guru_view
from backend.gurus.models import Guru


@guru_view
def coming_soon(request: HttpRequest, guru: Guru, **kwargs: object) -> HttpResponse:
    return render(request, "dashboard/guru_base.html", {"guru": guru})


def global_soon(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {})
