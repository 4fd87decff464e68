"""Guru icons: small raster images recognised by their bytes (never SVG), served from our own origin."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.urls import reverse

from backend.core.errors import AppError
from backend.gurus.models import Guru

MAX_ICON_BYTES = 256 * 1024
# Extension and content type by leading bytes; SVG is refused because it can carry script.
_SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "png", "image/png"),
    (b"\xff\xd8\xff", "jpg", "image/jpeg"),
    (b"GIF87a", "gif", "image/gif"),
    (b"GIF89a", "gif", "image/gif"),
)
CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


class InvalidIcon(AppError):
    code = "invalid_icon"


def icon_format(data: bytes) -> str | None:
    """The file extension for an image's bytes, or None when it is not a PNG, JPEG, GIF or WebP."""
    for signature, extension, _ in _SIGNATURES:
        if data.startswith(signature):
            return extension
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def guru_icon_set(*, guru: Guru, upload: UploadedFile) -> Guru:
    """Store an uploaded icon for the guru, replacing any previous one. Raises InvalidIcon."""
    if upload.size is None or upload.size > MAX_ICON_BYTES:
        raise InvalidIcon(f"The icon must be at most {MAX_ICON_BYTES // 1024} KB.")
    data = upload.read(MAX_ICON_BYTES + 1)
    extension = icon_format(data)
    if extension is None:
        raise InvalidIcon("The icon must be a PNG, JPEG, GIF or WebP image.")
    # The content hash in the name makes each version a new URL, so browsers may cache icons for long.
    name = f"icon-{hashlib.sha256(data).hexdigest()[:12]}.{extension}"
    old = guru.icon.name if guru.icon else ""
    guru.icon.save(name, ContentFile(data), save=False)
    guru.save(update_fields=["icon", "updated_at"])
    if old and old != guru.icon.name:
        guru.icon.storage.delete(old)
    return guru


def guru_icon_clear(*, guru: Guru) -> Guru:
    """Remove the uploaded icon (the icon URL, if any, applies again)."""
    if guru.icon:
        guru.icon.delete(save=False)
        guru.save(update_fields=["icon", "updated_at"])
    return guru


def guru_icon_src(guru: Guru) -> str:
    """Where pages load the guru's icon from: the uploaded file, else the icon URL, else empty."""
    if guru.icon:
        return reverse("guru-icon", kwargs={"guru_id": guru.pk, "name": (guru.icon.name or "").rsplit("/", 1)[-1]})
    return guru.icon_url
