"""Which TCP peers may name the client in X-Forwarded-For: only those in OPENGURU_TRUSTED_PROXIES (none by default)."""

from __future__ import annotations

from backend.config.env import env_list, ip_networks


def trusted_proxies(values: list[str]) -> list[str]:
    """Addresses and networks (CIDR), normalised; anything else ("*", a host name) fails fast."""
    return ip_networks(values, setting="OPENGURU_TRUSTED_PROXIES", example="172.30.0.0/24")


# Read per request by backend/config/asgi.py; rate limits, the login lock-out and logs key on the result.
OPENGURU_TRUSTED_PROXIES = trusted_proxies(env_list("OPENGURU_TRUSTED_PROXIES", []))
