"""One error shape for the API: {"code": stable_code, "msg": human message[, "errors": field details]}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

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


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exceptions, our AppErrors and oversized bodies, all as JSON with a stable code."""
    if isinstance(exc, AppError):
        return Response({"code": exc.code, "msg": exc.detail}, status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        return Response({"code": "too_large", "msg": "The request body is too large."},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    code = next((c for kind, c in _CODES.items() if isinstance(exc, kind)), exc.default_code)
    body: dict[str, Any] = {"code": code, "msg": _message(exc.detail)}
    if isinstance(exc, exceptions.ValidationError) and isinstance(exc.detail, dict):
        body["errors"] = exc.detail
    response.data = body
    return response
