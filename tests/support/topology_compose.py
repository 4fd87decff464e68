"""docker-compose.yml read as a plan for loopback processes: its commands and environments, addresses replaced.

Only what must differ on one host changes, each replacement checked to match: data-store addresses, the data
dir, the listen address and port, and the interpreter that runs uvicorn/celery/manage.py.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
LOOPBACK = "127.0.0.1"
# nginx connects to web from this address (proxy_bind); OPENGURU_TRUSTED_PROXIES names it alone.
NGINX_ADDRESS = "127.0.0.2"
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-?])([^}]*))?\}")
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")


def interpolate(value: str, variables: Mapping[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}`, `${VAR:?error}` and `$$` against `variables` (what .env holds)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, operator, argument = match.groups()
        current = variables.get(name, "")
        if operator == "?" and not current:
            raise KeyError(f"docker-compose.yml requires {name}: {argument}")
        return current or (argument if operator == "-" else "")

    return _VARIABLE.sub(one, value)


def compose_services() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    return services


def compose_default(variable: str) -> str:
    """The default docker-compose.yml gives `${variable:-default}` (e.g. OPENGURU_WEB_WORKERS)."""
    match = re.search(rf"\$\{{{variable}:-([^}}]*)\}}", COMPOSE.read_text())
    if match is None:
        raise AssertionError(f"docker-compose.yml no longer defaults {variable}")
    return match.group(1)


def _replaced(argv: list[str], old: str, new: str) -> list[str]:
    if argv.count(old) != 1:
        raise AssertionError(f"a docker-compose.yml command should hold {old!r} once: {argv}")
    return [new if arg == old else arg for arg in argv]


def _module_argv(argv: list[str]) -> list[str]:
    """The image runs `uvicorn`/`celery` from its PATH; here the same modules run under this interpreter."""
    if argv[0] not in ("uvicorn", "celery"):
        raise AssertionError(f"unexpected program in docker-compose.yml: {argv}")
    return [sys.executable, "-m", *argv]


BOTS = ("slack", "discord")  # compose's chat-bot services, each `python manage.py <command>`


@dataclass(frozen=True)
class Plan:
    """What compose would run, with loopback addresses and paths: commands and per-service environments."""

    migrate: list[str]
    web: list[str]
    worker: list[str]
    beat: list[str]
    slack: list[str]
    discord: list[str]
    env: dict[str, dict[str, str]]


def _service_env(service: dict[str, Any], dotenv: Mapping[str, str], addresses: Mapping[str, str],
                 extra: Mapping[str, str]) -> dict[str, str]:
    env = {name: interpolate(str(value), dotenv) for name, value in service["environment"].items()}
    for name, value in addresses.items():
        if name not in env:
            raise AssertionError(f"docker-compose.yml's app environment no longer sets {name}")
        env[name] = value
    base = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    return {**base, "PYTHONUNBUFFERED": "1", **env, **extra}


def plan_processes(data_dir: Path, web_port: int, dotenv: Mapping[str, str], addresses: Mapping[str, str],
          extra: Mapping[str, str]) -> Plan:
    services = compose_services()
    if "app_static:/srv/openguru/static:ro" not in services["nginx"]["volumes"]:
        raise AssertionError("compose's nginx no longer reads static files from /srv/openguru/static")
    command = {name: [interpolate(str(arg), dotenv) for arg in services[name]["command"]]
               for name in ("migrate", "web", "worker", "beat", *BOTS)}
    script = command["migrate"][-1]
    if command["migrate"][:2] != ["sh", "-c"] or "python manage.py" not in script:
        raise AssertionError(f"compose's migrate command changed: {command['migrate']}")
    migrate = ["sh", "-c", script.replace("python manage.py", f"{shlex.quote(sys.executable)} manage.py")]
    web = _replaced(_replaced(_module_argv(command["web"]), "0.0.0.0", LOOPBACK), "8000", str(web_port))
    beat = _replaced(_module_argv(command["beat"]), "/data/celerybeat-schedule", str(data_dir / "celerybeat-schedule"))
    for bot in BOTS:
        if command[bot][:2] != ["python", "manage.py"]:
            raise AssertionError(f"compose's {bot} command changed: {command[bot]}")
    slack, discord = ([sys.executable, *command[bot][1:]] for bot in BOTS)
    env = {name: _service_env(services[name], dotenv, addresses, extra)
           for name in ("migrate", "worker", "beat", *BOTS)}
    web_addresses = {**addresses, "OPENGURU_TRUSTED_PROXIES": f"{NGINX_ADDRESS}/32"}
    env["web"] = _service_env(services["web"], dotenv, web_addresses, extra)
    return Plan(migrate, web, _module_argv(command["worker"]), beat, slack, discord, env)
