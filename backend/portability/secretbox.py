"""Secrets inside an archive: sealed with a one-off key kept beside it, never in the archive itself.

The install's own keys cannot travel (the target has its own secret and encryption keys), and plain tokens
in a backup file would leak Slack and repository tokens with it. So export seals each secret with a new
random Fernet key written to `<archive>.key` (mode 600); import opens them with that key and the field
encrypts them again with the target's key on save.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from backend.portability.archive import ArchiveError

SEALED_PREFIX = "archive-fernet:"
_CHECK = b"openguru-archive-key"


def key_file_for(archive: Path) -> Path:
    return archive.with_name(archive.name + ".key")


class SecretBox:
    """Seals and opens the secrets of one archive."""

    def __init__(self, key: bytes) -> None:
        try:
            self.key = key
            self._fernet = Fernet(key)
        except ValueError as exc:
            raise ArchiveError("The key file does not hold an archive key (32 url-safe base64 bytes).") from exc

    @classmethod
    def new(cls) -> SecretBox:
        return cls(Fernet.generate_key())

    @classmethod
    def from_file(cls, path: Path) -> SecretBox:
        try:
            return cls(path.read_bytes().strip())
        except OSError as exc:
            raise ArchiveError(f"Cannot read the archive key {path}: {exc.strerror}.") from exc

    def seal(self, plain: str) -> str:
        return SEALED_PREFIX + self._fernet.encrypt(plain.encode()).decode()

    def open(self, sealed: str) -> str:
        if not sealed.startswith(SEALED_PREFIX):
            raise ArchiveError("A secret in the archive is not sealed; the archive was altered.")
        try:
            return self._fernet.decrypt(sealed[len(SEALED_PREFIX) :].encode()).decode()
        except InvalidToken as exc:
            raise ArchiveError("A secret in the archive does not open with this key; the archive was altered.") \
                from exc

    def check_token(self) -> str:
        """Stored in the manifest, so a wrong key file is refused before anything is written."""
        return self._fernet.encrypt(_CHECK).decode()

    def verify(self, token: str) -> None:
        try:
            ok = self._fernet.decrypt(token.encode()) == _CHECK
        except InvalidToken:
            ok = False
        if not ok:
            raise ArchiveError("This key file belongs to another archive: its secrets do not open with it.")

    def write(self, path: Path) -> None:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(self.key + b"\n")
        path.chmod(0o600)  # an existing file keeps its mode through O_CREAT
