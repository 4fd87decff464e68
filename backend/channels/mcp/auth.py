"""Who calls the MCP tools: an API key over HTTP (X-API-KEY), or the local operator over stdio."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.http import HttpRequest

from backend.answering.access import Asker, guru_for_asker
from backend.api.services import api_key_use
from backend.core.errors import RateLimited, RequestError, Unauthenticated
from backend.core.ratelimit import hit
from backend.gurus.models import Guru

HEADER = "X-API-KEY"


@dataclass(frozen=True)
class Caller:
    """One caller of the tools: whom they ask as, and the request that makes our links absolute.

    `request` is None over stdio: there is no host to link to, so links stay relative to the instance.
    """

    asker: Asker
    user: User | None = None
    request: HttpRequest | None = None

    def guru(self, slug: str | None) -> Guru:
        """The guru named, or the only one this caller may ask when none is named."""
        if slug:
            return guru_for_asker(slug, self.asker)
        only = self.asker.grant_guru_id or self.asker.key_guru_id
        if only is None:
            raise RequestError(400, "guru_required", "Name the guru to ask (its slug; see list_gurus).")
        guru = Guru.objects.filter(pk=only, active=True).first()
        return guru_for_asker(guru.slug if guru is not None else "", self.asker)


def key_caller(raw: str, request: HttpRequest) -> Caller:
    """The caller an X-API-KEY value stands for: Unauthenticated (401) or RateLimited (429) otherwise.

    Keys are maintainers' tools, as on the REST API: the key's user must maintain the guru (or be a
    superuser), a key scoped to one guru reaches only that guru, and the key's rate limit (one budget
    shared with the REST API) counts every MCP request.
    """
    raw = raw.strip()
    if not raw:
        raise Unauthenticated(f"Send an API key in the {HEADER} header.")
    key = api_key_use(raw)
    if key is None:
        raise Unauthenticated("Invalid or revoked API key.")
    decision = hit(f"api-key:{key.pk}", limit=key.rate_limit_per_minute)
    if not decision.allowed:
        raise RequestError(429, RateLimited.code, f"This API key is limited to {key.rate_limit_per_minute} "
                           "requests a minute.", {"Retry-After": str(decision.retry_after)})
    asker = Asker(user=key.user, maintainer_only=True, key_guru_id=key.guru_id)
    return Caller(asker=asker, user=key.user, request=request)


def local_caller(slug: str) -> Caller:
    """The local operator serving one guru over stdio (no key: whoever runs the command owns the instance)."""
    guru = Guru.objects.filter(slug=slug, active=True).first()
    if guru is None:
        raise LookupError(f"No active guru '{slug}'. `./openguru manage mcp <slug>` needs the slug of an active guru.")
    return Caller(asker=Asker(grant_guru_id=guru.pk))
