"""Health and Prometheus metrics endpoints, and the JSON-or-HTML not-found handler."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from backend.core.metrics_collector import render, scrape_status
from backend.core.selectors import health_check


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    health = health_check()
    body = {"status": "ok" if health.ok else "degraded", "database": health.database,
            "vector_store": health.vector_store}
    return JsonResponse(body, status=200 if health.ok else 503)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus exposition for scrapers on allowed addresses or with the bearer token (see metrics_collector)."""
    status = scrape_status(address=request.META.get("REMOTE_ADDR", ""),
                           authorization=request.headers.get("Authorization", ""))
    if status != 200:
        response = HttpResponse("Metrics need an allowed address or the bearer token.\n", status=status,
                                content_type="text/plain")
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = render(request.headers.get("Accept", ""))
    return HttpResponse(body, content_type=content_type, headers={"Cache-Control": "no-store"})


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON for API paths (clients parse errors), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "msg": "No such endpoint."}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception or Exception("not found"))
