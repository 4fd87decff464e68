"""Serving uploaded guru icons (public: they appear on guru pages and in widgets on other sites)."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.http import require_GET

from backend.core.file_streaming import streamed_file
from backend.gurus.icons import CONTENT_TYPES
from backend.gurus.models import Guru

ICON_MAX_AGE_SECONDS = 7 * 24 * 3600


@require_GET
def guru_icon(request: HttpRequest, guru_id: int, name: str) -> FileResponse:
    guru = Guru.objects.filter(pk=guru_id).only("icon").first()
    if guru is None or not guru.icon or (guru.icon.name or "").rsplit("/", 1)[-1] != name:
        raise Http404("No such icon.")
    response = streamed_file(guru.icon.open("rb"), content_type=CONTENT_TYPES[name.rsplit(".", 1)[-1]])
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = f"public, max-age={ICON_MAX_AGE_SECONDS}, immutable"
    # Widgets on other origins show the icon in an <img>; CORP lets them while nosniff keeps it an image.
    response["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response
