"""SSRF guard: refuse URLs that point at loopback, private, link-local or metadata addresses.

Every URL fetched on a user's behalf (web pages, sitemaps, robots.txt, git remotes, redirects) is
checked here first. An allow-list of hosts or networks opens intranet sources deliberately.
"""

from __future__ import annotations

import functools
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
DEFAULT_PORTS = {"https": 443, "http": 80, "git": 9418}
# Settings are read once per process: a maintainer who edits the allow-list must know nothing changes until then.
RESTART_NOTE = "OPENGURU_FETCH_ALLOWLIST is read when OpenGuru starts: restart it after changing the list."


class BlockedUrlError(PermanentServiceError):
    """The URL is not allowed for fetching on a user's behalf."""


class AddressBlockedError(BlockedUrlError):
    """The URL is well formed but its host resolves to an address the policy does not allow."""


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
class AllowEntry:
    """One OPENGURU_FETCH_ALLOWLIST entry: a host name or a network, on any port or on one port only."""

    host: str = ""
    network: Network | None = None
    port: int | None = None
    """None allows every port; a number allows that port only (so a redirect cannot reach the host's others)."""

    def allows_port(self, port: int | None) -> bool:
        return self.port is None or self.port == port


def parse_allow_entry(entry: str) -> AllowEntry:
    """"wiki.corp", "10.0.0.0/8", "127.0.0.1:8201", "wiki.corp:8443", "::1", "[::1]:8201" or "[fd00::/8]:443".

    A bare IPv6 address has colons of its own, so its port form needs the brackets of a URL. Raises
    ValueError for an entry that names a port that is not a number between 1 and 65535.
    """
    text, port = entry.strip().lower(), None
    if text.startswith("["):
        inside, closed, rest = text[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r} is not an allow-list entry; write IPv6 with a port as [::1]:8201")
        text, port = inside, _port(rest[1:], entry) if rest else None
    elif text.count(":") == 1:
        text, _, port_text = text.partition(":")
        port = _port(port_text, entry)
    try:
        return AllowEntry(network=ipaddress.ip_network(text, strict=False), port=port)
    except ValueError:
        return AllowEntry(host=text.rstrip("."), port=port)  # a host name, matched by name instead


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{entry!r} names the port {text!r}; a port is a number from 1 to 65535")
    return int(text)


@functools.cache
def _parsed(allow: tuple[str, ...]) -> tuple[AllowEntry, ...]:
    return tuple(parse_allow_entry(entry) for entry in allow if entry.strip())


@dataclass(frozen=True)
class UrlPolicy:
    """What may be fetched: http(s) to public addresses, plus explicitly allowed hosts or networks (and ports)."""

    allow: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ("http", "https")
    public: bool = True
    """False: only allow-listed hosts and networks pass, public ones included (for plain-text git transports)."""

    @classmethod
    def from_setting(cls, entries: Sequence[str], *, schemes: Sequence[str] = ("http", "https")) -> UrlPolicy:
        return cls(allow=tuple(e.strip().lower() for e in entries if e.strip()), schemes=tuple(schemes))

    def host_allowed(self, host: str, port: int | None) -> bool:
        """An entry names this host (by name, not by address) on this port or on every port."""
        return any(entry.host == host and entry.allows_port(port) for entry in _parsed(self.allow))

    def address_allowed(self, address: IPAddress, port: int | None = None) -> bool:
        """Allow-listed (network and port), or public; port None matches only entries without a port."""
        for entry in _parsed(self.allow):
            if entry.network is not None and address in entry.network and entry.allows_port(port):
                return True
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in _METADATA) or not self.public:
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
    try:
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 80)
    except ValueError as exc:
        raise BlockedUrlError(f"The URL {url!r} has an invalid port.") from exc
    if policy.host_allowed(host, port):
        return host
    addresses = resolver(host, port)
    blocked = [a for a in addresses if not policy.address_allowed(ipaddress.ip_address(a.split("%")[0]), port)]
    if blocked or not addresses:
        raise AddressBlockedError(
            f"{host} resolves to a private, loopback or link-local address ({', '.join(blocked) or 'none'}); "
            f"OpenGuru does not fetch internal addresses unless OPENGURU_FETCH_ALLOWLIST allows them (port {port} "
            f"here; an entry such as 10.0.0.5:8080 allows one port, 10.0.0.5 every port). {RESTART_NOTE}"
        )
    return host
