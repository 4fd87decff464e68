"""Application errors with a stable code and HTTP status, rendered as JSON by the API layer."""

from __future__ import annotations


class AppError(Exception):
    """Base for errors shown to API clients and maintainers."""

    code = "error"
    status = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(AppError):
    code = "not_found"
    status = 404


class Conflict(AppError):
    code = "conflict"
    status = 409


class ModelUnavailable(AppError):
    code = "model_unavailable"
    status = 503


class VectorStoreUnavailable(AppError):
    code = "vector_store_unavailable"
    status = 503
