"""Core write paths: the first administrator and the global settings."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from backend.core.models import Settings
from backend.core.selectors import settings_get


@dataclass(frozen=True)
class AdminCredentials:
    """Login of a freshly created administrator; the password exists nowhere else."""

    username: str
    password: str


def admin_ensure(*, username: str = "admin", email: str = "", password: str = "") -> AdminCredentials | None:
    """Create the first superuser if none exists; return its credentials, or None if one existed.

    Safe to run concurrently and repeatedly: a second run sees the existing superuser.
    """
    user_model = get_user_model()
    with transaction.atomic():
        if user_model.objects.filter(is_superuser=True).exists():
            return None
        password = password or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email=email, password=password)
    return AdminCredentials(username=username, password=password)


SETTINGS_EDITABLE_FIELDS = ("rerank_threshold", "trust_score_threshold", "chunk_size", "chunk_overlap",
                            "chunk_min_length", "answer_model", "history_turns", "llm_provider", "llm_base_url",
                            "llm_api_key", "summary_token_budget")


def settings_update(**fields: object) -> Settings:
    """Change the global settings row (created first if missing); the model's validators apply.

    New split sizes only affect sources indexed afterwards: callers offer a re-index.
    Raises ValueError for a field that is not editable and ValidationError for a value out of range.
    """
    unknown = set(fields) - set(SETTINGS_EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"Not editable: {', '.join(sorted(unknown))}")
    settings_get()
    with transaction.atomic():
        # Locked so two staff members saving at once cannot interleave a read-modify-write of the row.
        instance = Settings.objects.select_for_update().get(pk=Settings.SINGLETON_ID)
        for field, value in fields.items():
            setattr(instance, field, value)
        instance.full_clean()
        instance.save(update_fields=[*fields, "updated_at"])
    return instance
