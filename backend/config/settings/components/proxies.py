"""Which TCP peers may name the client in X-Forwarded-For: only those in OPENGURU_TRUSTED_PROXIES (none by default)."""

from __future__ import annotations

import ipaddress

from django.core.exceptions import ImproperlyConfigured

from backend.config.env import env_list


def trusted_proxies(values: list[str]) -> list[str]:
    """Addresses and networks (CIDR), normalised; anything else ("*", a host name) fails fast."""
    networks = []
    for value in values:
        try:
            networks.append(str(ipaddress.ip_network(value, strict=False)))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"OPENGURU_TRUSTED_PROXIES: {value!r} is not an IP address or network such as 172.30.0.0/24"
            ) from exc
    return networks


# Read per request by backend/config/asgi.py; rate limits, the login lock-out and logs key on the result.
OPENGURU_TRUSTED_PROXIES = trusted_proxies(env_list("OPENGURU_TRUSTED_PROXIES", []))
