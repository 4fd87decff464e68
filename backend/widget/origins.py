"""Matching a browser's Origin header against a widget's allowed-origin patterns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ANY = "*"
_SCHEMES = {"http": 80, "https": 443}
_ORIGIN = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[0-9a-f:.]+\]|[^:/?#@\[\]\\\s]+)"
                     r"(?::(?P<port>[0-9]{1,5}|\*))?/?$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_IPV6 = re.compile(r"^\[[0-9a-f:.]*:[0-9a-f:.]*\]$")


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int | None


@dataclass(frozen=True)
class Pattern:
    scheme: str
    host: str
    """The exact host, or the parent domain when `subdomains` is set."""
    subdomains: bool
    port: int | None
    """None means any port (`:*`)."""


def _host(raw: str) -> str:
    """The normalised host (lowercase, IDNA), or ValueError."""
    host = raw.lower()
    if host.startswith("["):
        if not _IPV6.match(host):
            raise ValueError(f"{raw!r} is not a valid IPv6 address.")
        return host
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"{raw!r} is not a valid host name.") from exc
    if len(host) > 253 or not all(_LABEL.match(label) for label in host.split(".")):
        raise ValueError(f"{raw!r} is not a valid host name.")
    return host


def _port(raw: str | None, scheme: str) -> int:
    if raw is None:
        return _SCHEMES[scheme]
    port = int(raw)
    if not 0 < port < 65536:
        raise ValueError(f"Port {raw} is out of range.")
    return port


def parse_origin(value: str) -> Origin | None:
    """scheme://host[:port] with the default port made explicit; None for anything else (incl. "null")."""
    match = _ORIGIN.match(value.strip().lower()) if value else None
    if match is None or match["scheme"] not in _SCHEMES or match["port"] == ANY:
        return None
    try:
        return Origin(match["scheme"], _host(match["host"]), _port(match["port"], match["scheme"]))
    except ValueError:
        return None


@lru_cache(maxsize=1024)
def parse_pattern(value: str) -> Pattern:
    """A pattern in canonical form, or ValueError saying what is wrong with it."""
    text = value.strip()
    if "://" not in text:
        raise ValueError(f"{value!r} needs a scheme, e.g. https://{text or 'docs.example.com'}.")
    match = _ORIGIN.match(text.lower())
    if match is None:
        raise ValueError(f"{value!r} is not an origin: use scheme://host[:port], with no path, query or user.")
    scheme, host = match["scheme"], match["host"]
    if scheme not in _SCHEMES:
        raise ValueError(f"{value!r} must start with http:// or https://.")
    subdomains = host.startswith("*.")
    if subdomains:
        host = host[2:]
    if ANY in host:
        raise ValueError(f"{value!r}: a wildcard is only allowed as the first label, as in https://*.example.com.")
    host = _host(host)
    if subdomains and (host.startswith("[") or ("." not in host and host != "localhost")):
        # `*.com` would admit every site under a top-level domain.
        raise ValueError(f"{value!r}: the wildcard needs a registered domain after it, as in *.example.com.")
    port = None if match["port"] == ANY else _port(match["port"], scheme)
    return Pattern(scheme, host, subdomains, port)


def validate_pattern(value: object) -> str:
    """The canonical form of an allowed-origin pattern (ValueError for junk)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("An allowed origin must be a non-empty string.")
    if value.strip() == ANY:
        return ANY
    if value.strip().lower() == "null":
        raise ValueError('"null" origins (sandboxed frames, files) cannot be allowed.')
    pattern = parse_pattern(value)
    host = f"*.{pattern.host}" if pattern.subdomains else pattern.host
    if pattern.port is None:
        return f"{pattern.scheme}://{host}:*"
    port = "" if pattern.port == _SCHEMES[pattern.scheme] else f":{pattern.port}"
    return f"{pattern.scheme}://{host}{port}"


def canonical_patterns(values: Sequence[object]) -> tuple[list[str], list[tuple[int, str]]]:
    """The canonical, de-duplicated patterns of `values`, and (index, reason) for each one that is not valid."""
    cleaned: list[str] = []
    problems: list[tuple[int, str]] = []
    for index, value in enumerate(values):
        try:
            pattern = validate_pattern(value)
        except ValueError as exc:
            problems.append((index, str(exc)))
            continue
        if pattern not in cleaned:
            cleaned.append(pattern)
    return cleaned, problems


def _matches(pattern: Pattern, origin: Origin) -> bool:
    if pattern.scheme != origin.scheme or (pattern.port is not None and pattern.port != origin.port):
        return False
    if pattern.subdomains:
        return origin.host.endswith("." + pattern.host)
    return origin.host == pattern.host


def origin_allowed(origin: str, patterns: Sequence[str]) -> bool:
    """Whether a browser Origin header value matches one of the patterns."""
    parsed = parse_origin(origin)
    if parsed is None:
        return False
    if isinstance(patterns, str):
        patterns = [patterns]  # iterating the string itself would make a "*" character a wildcard
    for raw in patterns:
        if not isinstance(raw, str):
            continue
        if raw.strip() == ANY:
            return True
        try:
            pattern = parse_pattern(raw)
        except ValueError:
            continue  # a junk pattern saved before validation existed matches nothing
        if _matches(pattern, parsed):
            return True
    return False
