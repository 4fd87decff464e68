"""The one error shape of every HTTP channel: `{"code", "msg"}`, plus `detail` and `error_id` where useful."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse

from backend.core.errors import AppError, RequestError, app_error

# The codes clients may branch on (documented in the OpenAPI schema); messages may change, codes do not.
STABLE_CODES = (
    "invalid", "invalid_json", "invalid_question", "invalid_session", "invalid_stream", "invalid_fetch_existing",
    "too_large", "too_many_fields", "too_many_files", "unsupported_media_type", "method_not_allowed",
    "not_acceptable", "unauthenticated", "forbidden", "not_found", "conflict", "rate_limited",
    "model_unavailable", "vector_store_unavailable", "busy", "internal_error",
    "invalid_widget_id", "origin_not_allowed",
)


def error_body(exc: AppError) -> dict[str, Any]:
    """`code` is stable (clients branch on it), `msg` is a sentence for people, `detail` is structured
    (e.g. field errors), `error_id` names the log entry of a failure whose cause is not shown."""
    body: dict[str, Any] = {"code": exc.code, "msg": exc.detail}
    extra = exc.extra if isinstance(exc, RequestError) else None
    if extra is not None:
        body["detail"] = extra
    if exc.error_id:
        body["error_id"] = exc.error_id
    return body


def error_headers(exc: AppError) -> dict[str, str]:
    return dict(exc.headers) if isinstance(exc, RequestError) else {}


def error_response(exc: AppError, **compat: Any) -> JsonResponse:
    """The error as a JSON response with its status and headers; `compat` adds a client's own field names."""
    response = JsonResponse({**error_body(exc), **compat}, status=exc.status)
    for name, value in error_headers(exc).items():
        response[name] = value
    return response


def event_error(data: dict[str, Any]) -> AppError:
    """An `error` event (known before the first byte was sent) as the AppError it stands for."""
    return app_error(str(data["code"]), str(data["msg"]), error_id=str(data.get("error_id", "")))
