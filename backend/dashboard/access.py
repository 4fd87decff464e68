"""Who may open which dashboard page: maintainers see their gurus, superusers see all, others get 404."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404

from backend.gurus.models import Guru
from backend.gurus.selectors import guru_list_for_user

P = ParamSpec("P")


class AuthenticatedHttpRequest(HttpRequest):
    """The request as a view behind login_required sees it: a signed-in user (a type, never instantiated)."""

    user: User


GuruView = Callable[Concatenate[AuthenticatedHttpRequest, Guru, P], HttpResponseBase]


def maintained_guru(request: HttpRequest, slug: str) -> Guru:
    """The guru with this slug if the user maintains it (any guru for a superuser); 404 otherwise.

    404 rather than 403 so that a maintainer cannot learn which other gurus exist.
    """
    return get_object_or_404(guru_list_for_user(user=request.user), slug=slug)


def guru_view(view: GuruView[P]) -> Callable[..., HttpResponseBase]:
    """Decorate `view(request, guru, ...)`: log-in required, `slug` resolved to a maintained guru."""

    @login_required
    @wraps(view)
    def wrapper(request: AuthenticatedHttpRequest, slug: str, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
        guru = maintained_guru(request, slug)
        request.dashboard_guru = guru  # type: ignore[attr-defined]  # read by the nav context processor
        return view(request, guru, *args, **kwargs)

    return wrapper


def staff_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a view of instance-wide pages (global settings): staff only, others get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Only administrators can change instance settings.")
        return view(request, *args, **kwargs)

    return wrapper
