"""Typed readers for environment variables; the only place that reads os.environ for settings."""

from __future__ import annotations

import ipaddress
import json
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str = "") -> str:
    """A string variable, or the default when unset or empty."""
    return os.environ.get(name, "").strip() or default


def env_bool(name: str, default: bool = False) -> bool:
    """A boolean variable: 1/true/yes/on (case-insensitive) are true."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    return raw in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    """An integer variable; a malformed value fails fast with the variable's name."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list variable."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_json(name: str, default: object) -> object:
    """A JSON variable; malformed JSON fails fast with the variable's name."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be JSON: {exc}") from exc


def env_path(name: str, default: Path) -> Path:
    """An absolute path variable (relative values are resolved against the working directory)."""
    raw = os.environ.get(name, "").strip()
    return Path(raw).resolve() if raw else default


def env_mandatory(name: str) -> str:
    """A variable production cannot run without."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"The environment variable {name} must be set in production.")
    return value


def ip_networks(values: list[str], *, setting: str, example: str) -> list[str]:
    """Addresses and networks (CIDR) of a setting, normalised; anything else ("*", a host name) fails fast."""
    networks = []
    for value in values:
        try:
            networks.append(str(ipaddress.ip_network(value, strict=False)))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{setting}: {value!r} is not an IP address or network such as {example}") from exc
    return networks
