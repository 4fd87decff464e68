"""Counts every HTTP response for /metrics by method, route name and status class (in memory; see metrics.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import sync_and_async_middleware

from backend.core import metrics


def _route(request: HttpRequest) -> str:
    # The URL pattern's name keeps label values bounded; raw paths (ids, slugs, probes) would not be.
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return str(match.view_name)
    return "static" if request.path.startswith(str(settings.STATIC_URL)) else "unmatched"


def _count(request: HttpRequest, response: HttpResponseBase) -> None:
    metrics.request_finished(request.method or "", _route(request), response.status_code)


@sync_and_async_middleware
def request_metrics(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    """Outermost middleware, sync or async like the stack it wraps (ASGI streams stay on the event loop)."""
    if iscoroutinefunction(get_response):
        async_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = get_response

        async def middleware(request: HttpRequest) -> HttpResponseBase:
            response = await async_response(request)
            _count(request, response)
            return response

        return middleware

    def sync_middleware(request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = get_response(request)
        _count(request, response)
        return response

    return sync_middleware
