"""Model fields that encrypt secrets at rest (Fernet, key derived from settings)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

_PREFIX = "fernet:"


def _fernet() -> Fernet:
    # A dedicated key may be set; otherwise derive one from SECRET_KEY so secrets are never plain.
    material = settings.OPENGURU_ENCRYPTION_KEY or settings.SECRET_KEY
    digest = hashlib.sha256(f"openguru-secrets:{material}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt_text(value: str) -> str:
    """Encrypt a secret for storage."""
    return _PREFIX + _fernet().encrypt(value.encode()).decode()


def decrypt_text(stored: str) -> str:
    """Decrypt a stored secret; fails loudly if the key changed."""
    if not stored.startswith(_PREFIX):
        return stored
    try:
        return _fernet().decrypt(stored[len(_PREFIX) :].encode()).decode()
    except InvalidToken as exc:
        raise ImproperlyConfigured(
            "A stored secret cannot be decrypted: DJANGO_SECRET_KEY or OPENGURU_ENCRYPTION_KEY changed "
            "since it was saved. Restore the old key or re-enter the integration's tokens."
        ) from exc


class EncryptedTextField(models.TextField):
    """A TextField whose value is encrypted in the database and plain in Python."""

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        return None if value is None else decrypt_text(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt_text(str(value))
