"""A database that cannot take one more connection answers 503 `busy` with Retry-After, never a bare 500 page."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from backend.core.errors import PUBLIC_MESSAGES, Busy, new_error_id

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5


def busy_response(request: HttpRequest, exc: Exception) -> HttpResponse:
    """The 503 for a database failure, logged under a fresh error id (the cause never reaches the client)."""
    error_id = new_error_id()
    logger.error("database unavailable for %s %s (error id %s): %s", request.method, request.path, error_id, exc)
    message = PUBLIC_MESSAGES[Busy.code]
    if "text/html" in request.headers.get("Accept", "") and not request.path.startswith("/api/"):
        response: HttpResponse = HttpResponse(f"<!doctype html><title>Busy</title><p>{message}</p>", status=503)
    else:
        response = JsonResponse({"code": Busy.code, "msg": message, "detail": message, "error_id": error_id},
                                status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseBusyMiddleware(MiddlewareMixin):
    """Turns OperationalError/InterfaceError raised by a view (pool timeout, "too many clients") into busy_response."""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            return busy_response(request, exception)
        return None
