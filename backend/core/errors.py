"""Application errors with a stable code and HTTP status, rendered as JSON by the API layer."""

from __future__ import annotations

import secrets


class AppError(Exception):
    """Base for errors shown to API clients and maintainers."""

    code = "error"
    status = 400

    def __init__(self, detail: str, *, error_id: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        # Set when the full cause went to the logs: the visitor quotes it, the maintainer greps for it.
        self.error_id = error_id


class RequestError(AppError):
    """A refusal with its own status and code, e.g. a malformed request, with optional headers and `extra`
    (structured detail such as field errors) for the response body."""

    def __init__(self, status: int, code: str, msg: str, headers: dict[str, str] | None = None, *,
                 error_id: str = "", extra: object = None) -> None:
        super().__init__(msg, error_id=error_id)
        self.status, self.code = status, code
        self.headers = dict(headers or {})
        self.extra = extra

    @property
    def msg(self) -> str:
        return self.detail


class NotFound(AppError):
    code = "not_found"
    status = 404


class Unauthenticated(AppError):
    code = "unauthenticated"
    status = 401


class Forbidden(AppError):
    code = "forbidden"
    status = 403


class RateLimited(AppError):
    code = "rate_limited"
    status = 429


class Conflict(AppError):
    code = "conflict"
    status = 409


class ModelUnavailable(AppError):
    code = "model_unavailable"
    status = 503


class VectorStoreUnavailable(AppError):
    code = "vector_store_unavailable"
    status = 503


class InternalError(AppError):
    code = "internal_error"
    status = 500


class Busy(AppError):
    """The database had no connection free in time (a full pool, or the server refusing more clients)."""

    code = "busy"
    status = 503


class InvalidQuestion(AppError):
    code = "invalid_question"
    status = 400


# What a visitor is told for a failure whose cause is internal: a fixed sentence, never the exception's text.
PUBLIC_MESSAGES = {
    ModelUnavailable.code: "The AI model service is not available right now; please try again in a moment.",
    VectorStoreUnavailable.code: "The guru's search index is not available right now; please try again in a moment.",
    InternalError.code: "Something went wrong while answering; please try again.",
    Busy.code: "The server is busy right now; please try again in a moment.",
}
_KINDS: dict[str, type[AppError]] = {kind.code: kind for kind in (
    NotFound, Unauthenticated, Forbidden, RateLimited, Conflict, ModelUnavailable, VectorStoreUnavailable,
    InternalError, InvalidQuestion, Busy)}


def new_error_id() -> str:
    """A short random id that ties what a visitor saw to the logged exception and the stored question."""
    return secrets.token_hex(6)


def status_for(code: str) -> int:
    """The HTTP status of an error code (an unknown code is a server error)."""
    kind = _KINDS.get(code)
    return kind.status if kind is not None else 500


def app_error(code: str, detail: str, *, error_id: str = "") -> AppError:
    """An AppError carrying this code and its status, e.g. rebuilt from an `error` event."""
    kind = _KINDS.get(code)
    if kind is not None:
        return kind(detail, error_id=error_id)
    error = AppError(detail, error_id=error_id)
    error.code, error.status = code, status_for(code)
    return error
