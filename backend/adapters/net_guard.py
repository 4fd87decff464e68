"""SSRF guard: refuse URLs that point at loopback, private, link-local or metadata addresses.

Every URL fetched on a user's behalf (web pages, sitemaps, robots.txt, git remotes, redirects) is
checked here first. An allow-list of hosts or networks opens intranet sources deliberately.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from backend.pipeline.errors import PermanentServiceError, TransientServiceError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]

# Cloud metadata endpoints that are not covered by the private/link-local ranges.
_METADATA = (ipaddress.ip_network("fd00:ec2::254/128"), ipaddress.ip_network("100.100.100.200/32"))


class BlockedUrlError(PermanentServiceError):
    """The URL is not allowed for fetching on a user's behalf."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the machine's resolver gives for host, in its order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno == socket.EAI_AGAIN:  # the resolver itself failed; the name may well exist
            raise TransientServiceError(f"Could not resolve {host!r} right now ({exc.strerror}).") from exc
        raise PermanentServiceError(f"The host {host!r} does not resolve ({exc.strerror}).") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class UrlPolicy:
    """What may be fetched: http(s) to public addresses, plus explicitly allowed hosts or networks."""

    allow: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ("http", "https")

    @classmethod
    def from_setting(cls, entries: Sequence[str], *, schemes: Sequence[str] = ("http", "https")) -> UrlPolicy:
        return cls(allow=tuple(e.strip().lower() for e in entries if e.strip()), schemes=tuple(schemes))

    def _allowed_networks(self) -> list[Network]:
        networks: list[Network] = []
        for entry in self.allow:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue  # a host name, matched by name instead
        return networks

    def address_allowed(self, address: IPAddress) -> bool:
        if any(address in network for network in self._allowed_networks()):
            return True
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in _METADATA):
            return False
        return address.is_global and not (address.is_multicast or address.is_reserved)


def check_url(url: str, policy: UrlPolicy, *, resolver: Resolver = system_resolver) -> str:
    """Return the URL's host if every address it resolves to is allowed; raise BlockedUrlError otherwise."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in policy.schemes:
        given = parts.scheme or "no scheme"
        raise BlockedUrlError(f"Only {', '.join(policy.schemes)} URLs can be fetched, not {given}.")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise BlockedUrlError(f"The URL {url!r} has no host.")
    if parts.username or parts.password:
        raise BlockedUrlError("URLs with credentials in them are not fetched; configure a token instead.")
    if host in policy.allow:
        return host
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    addresses = resolver(host, port)
    blocked = [a for a in addresses if not policy.address_allowed(ipaddress.ip_address(a.split("%")[0]))]
    if blocked or not addresses:
        raise BlockedUrlError(
            f"{host} resolves to a private, loopback or link-local address ({', '.join(blocked) or 'none'}); "
            "OpenGuru does not fetch internal addresses unless OPENGURU_FETCH_ALLOWLIST allows them."
        )
    return host
