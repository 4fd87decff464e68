"""How a failed answer is told: a fixed public sentence per kind of failure, the full cause kept for maintainers."""

from __future__ import annotations

from django.db import DatabaseError

from backend.core.errors import (
    PUBLIC_MESSAGES,
    AppError,
    Busy,
    InternalError,
    ModelUnavailable,
    VectorStoreUnavailable,
)
from backend.pipeline.errors import ServiceError, VectorStoreError


def public_error(exc: Exception) -> AppError:
    """The error as the asker may see it: our own AppErrors as they are, anything else as a fixed sentence."""
    if isinstance(exc, AppError):
        return exc
    if isinstance(exc, VectorStoreError):
        kind: type[AppError] = VectorStoreUnavailable
    elif isinstance(exc, ServiceError):
        kind = ModelUnavailable
    elif isinstance(exc, DatabaseError):
        kind = Busy  # no connection free in time: worth a retry, unlike a crash
    else:
        kind = InternalError
    return kind(PUBLIC_MESSAGES[kind.code])


def error_cause(exc: BaseException) -> str:
    """The exception and what it was raised from, for the maintainer (never sent to the asker)."""
    parts, seen = [], 0
    current: BaseException | None = exc
    while current is not None and seen < 4:
        parts.append(f"{type(current).__name__}: {current}")
        current, seen = current.__cause__ or current.__context__, seen + 1
    return " ← caused by ".join(parts)[:4000]
