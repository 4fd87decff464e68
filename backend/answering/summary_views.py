"""GET /g/<slug>/summary/: the guru's summary and its sources' summaries, which answers citing it link to."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from backend.answering.access import Asker, guru_for_asker
from backend.core.errors import Forbidden, NotFound
from backend.gurus.icons import guru_icon_src
from backend.gurus.models import Guru
from backend.sources.summary_reads import guru_summary_read, source_summary_items


def _visible_guru(request: HttpRequest, slug: str) -> Guru:
    """The guru page's own rule, as answering.views applies it (that module is a protected interface in
    .importlinter): whoever may ask the guru may read its summary; refusals are Django's 404 and 403 pages."""
    try:
        return guru_for_asker(slug, Asker(user=request.user))
    except NotFound as exc:
        raise Http404(exc.detail) from exc
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from exc


@require_GET
def guru_summary_page(request: HttpRequest, slug: str) -> HttpResponse:
    guru = _visible_guru(request, slug)
    context = {"guru": guru, "icon_src": guru_icon_src(guru), "page_url": f"/g/{guru.slug}/",
               "read": guru_summary_read(guru), "items": source_summary_items(guru)}
    return render(request, "guru/summary.html", context)
