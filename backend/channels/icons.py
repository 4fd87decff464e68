"""Image URLs for answers' sources and gurus: absolute links to SVGs we ship, for clients on other origins."""

from __future__ import annotations

from django.http import HttpRequest
from django.templatetags.static import static

# One icon per SourceKind value; an unknown or missing kind gets the generic web page icon.
_SOURCE_ICONS = {"WEBSITE": "website", "YOUTUBE": "youtube", "PDF": "pdf", "GITHUB_REPO": "repository"}
_FALLBACK = "website"
DEFAULT_GURU_ICON = "img/guru-default.svg"


def source_icon_url(request: HttpRequest, kind: str) -> str:
    """The absolute URL of the icon for a source of this kind (Gurubase's widget loads a reference's `icon`
    from the host page, so a relative path or a kind name would 404 there)."""
    name = _SOURCE_ICONS.get(kind, _FALLBACK)
    return request.build_absolute_uri(static(f"img/sources/{name}.svg"))


def guru_icon_url(request: HttpRequest, src: str) -> str:
    """`src` (an uploaded icon's path or the guru's icon URL) as an absolute URL; our default icon when empty."""
    return request.build_absolute_uri(src or static(DEFAULT_GURU_ICON))
