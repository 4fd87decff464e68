"""Health endpoint and the signed-in landing page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from backend.core.selectors import health_check
from backend.gurus.selectors import guru_collection_reports, guru_list_for_user


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    health = health_check()
    body = {"status": "ok" if health.ok else "degraded", "database": health.database,
            "vector_store": health.vector_store}
    return JsonResponse(body, status=200 if health.ok else 503)


@login_required
@require_GET
def dashboard_home(request: HttpRequest) -> HttpResponse:
    reports = guru_collection_reports(gurus=guru_list_for_user(user=request.user))
    return render(request, "dashboard/home.html", {"reports": reports})


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON for API paths (clients parse errors), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "msg": "No such endpoint."}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception or Exception("not found"))
