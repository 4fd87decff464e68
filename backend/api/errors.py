"""The API's errors in the one error shape: {"code": stable_code, "msg": human message[, "detail": field errors]}."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from backend.channels.errors import error_body, error_headers
from backend.core.errors import AppError

_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.NotAuthenticated: "unauthenticated",
    exceptions.AuthenticationFailed: "unauthenticated",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.Throttled: "rate_limited",
    exceptions.ParseError: "invalid_json",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.ValidationError: "invalid",
}


def _message(detail: Any) -> str:
    if isinstance(detail, list) and detail:
        return _message(detail[0])
    if isinstance(detail, dict) and detail:
        field, value = next(iter(detail.items()))
        return f"{field}: {_message(value)}"
    return str(detail)


def oversized_input(exc: BaseException) -> tuple[int, dict[str, str]] | None:
    """Django's own request bounds (body size, field and file counts) as (status, JSON body), naming the bound."""
    if isinstance(exc, RequestDataTooBig):
        return 413, {"code": "too_large", "msg": "The request body is too large."}
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return 400, {"code": "too_many_fields",
                     "msg": f"At most {limit} query or form fields per request (e.g. ids to delete); send batches."}
    if isinstance(exc, TooManyFilesSent):
        return 400, {"code": "too_many_files",
                     "msg": f"At most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files per request."}
    return None


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 400 handler (errors raised outside the API views): JSON on API paths, the HTML page elsewhere."""
    if not request.path.startswith("/api/"):
        return defaults.bad_request(request, exception or Exception("bad request"))
    oversized = oversized_input(exception) if exception is not None else None
    status_code, body = oversized or (400, {"code": "bad_request", "msg": "The request was malformed."})
    return JsonResponse(body, status=status_code)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exceptions, our AppErrors and oversized bodies, all as JSON with a stable code."""
    if isinstance(exc, AppError):
        # error_id: the id the cause was logged (and recorded) under; never the cause itself.
        return Response(error_body(exc), status=exc.status, headers=error_headers(exc))
    oversized = oversized_input(exc)
    if oversized is not None:
        return Response(oversized[1], status=oversized[0])
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    code = next((c for kind, c in _CODES.items() if isinstance(exc, kind)), exc.default_code)
    body: dict[str, Any] = {"code": code, "msg": _message(exc.detail)}
    if isinstance(exc, exceptions.ValidationError) and isinstance(exc.detail, dict):
        body["detail"] = exc.detail  # the field errors, as every channel's `detail`
    response.data = body
    return response
