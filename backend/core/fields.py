"""Model fields that encrypt secrets at rest (Fernet; keys derived from settings, old keys kept as fallbacks)."""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

PREFIX = "fernet:"


def _derive(material: str) -> Fernet:
    digest = hashlib.sha256(f"openguru-secrets:{material}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def key_materials() -> list[str]:
    """The key that encrypts, then every key that may still decrypt, without repeats.

    The current key is OPENGURU_ENCRYPTION_KEY, or the secret key when none is set. Old values stay
    readable under OPENGURU_ENCRYPTION_KEY_FALLBACKS, and under the secret key and its fallbacks
    (DJANGO_SECRET_KEY_FALLBACKS): secrets saved before a dedicated key was set, or before the secret key
    was rotated, were encrypted with those. `manage.py rotate_keys` re-encrypts them all with the current key.
    """
    dedicated = settings.OPENGURU_ENCRYPTION_KEY
    ordered = [dedicated or settings.SECRET_KEY, *settings.OPENGURU_ENCRYPTION_KEY_FALLBACKS,
               settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    return list(dict.fromkeys(material for material in ordered if material))


@functools.lru_cache(maxsize=8)
def _keyring(materials: tuple[str, ...]) -> tuple[Fernet, MultiFernet]:
    fernets = [_derive(material) for material in materials]
    return fernets[0], MultiFernet(fernets)


def _current() -> tuple[Fernet, MultiFernet]:
    # Cached per key set (settings may change in tests): deriving is cheap, but MultiFernet tries keys in order.
    return _keyring(tuple(key_materials()))


def encrypt_text(value: str) -> str:
    """Encrypt a secret for storage with the current key."""
    return PREFIX + _current()[0].encrypt(value.encode()).decode()


def decrypt_text(stored: str) -> str:
    """Decrypt a stored secret with the current key or a fallback; fails loudly if none fits."""
    if not stored.startswith(PREFIX):
        return stored
    try:
        return _current()[1].decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken as exc:
        raise ImproperlyConfigured(
            "A stored secret cannot be decrypted: DJANGO_SECRET_KEY or OPENGURU_ENCRYPTION_KEY changed since it "
            "was saved. Put the old key in OPENGURU_ENCRYPTION_KEY_FALLBACKS (or DJANGO_SECRET_KEY_FALLBACKS) "
            "and run `manage.py rotate_keys`, or re-enter the integration's tokens."
        ) from exc


def is_current(stored: str) -> bool:
    """True when the stored value is already encrypted with the current key (rotation can skip it)."""
    if not stored.startswith(PREFIX):
        return False
    try:
        _current()[0].decrypt(stored[len(PREFIX) :].encode())
    except InvalidToken:
        return False
    return True


class EncryptedTextField(models.TextField):
    """A TextField whose value is encrypted in the database and plain in Python."""

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        return None if value is None else decrypt_text(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt_text(str(value))
