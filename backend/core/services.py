"""Core write paths: the first administrator."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction


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
