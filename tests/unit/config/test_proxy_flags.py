"""Deployment files: uvicorn believes no forwarding header, and compose trusts only the nginx network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]


def _compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def test_every_uvicorn_command_runs_without_proxy_headers() -> None:
    cmd = re.search(r"^CMD (\[.*\])$", (REPO / "Dockerfile").read_text(), re.M)
    assert cmd is not None
    commands = {"Dockerfile": json.loads(cmd.group(1)), "compose web": _compose()["services"]["web"]["command"]}
    launcher = (REPO / "backend" / "launcher.py").read_text()
    for name, argv in commands.items():
        assert "--no-proxy-headers" in argv and "--forwarded-allow-ips" not in argv, name
    assert '"--no-proxy-headers"' in launcher and "forwarded-allow-ips" not in launcher


def test_compose_trusts_the_edge_network_that_only_nginx_and_web_share() -> None:
    compose = _compose()
    subnet = compose["networks"]["edge"]["ipam"]["config"][0]["subnet"]
    assert compose["services"]["web"]["environment"]["OPENGURU_TRUSTED_PROXIES"] == subnet
    on_edge = sorted(name for name, service in compose["services"].items() if "edge" in service.get("networks", []))
    assert on_edge == ["nginx", "web"]
    assert compose["services"]["nginx"]["networks"] == ["edge"]


def test_nginx_replaces_the_forwarded_for_header_instead_of_appending() -> None:
    conf = (REPO / "nginx" / "nginx.conf").read_text()
    assert re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$remote_addr;", conf)
    assert "proxy_add_x_forwarded_for" not in conf


def test_every_manage_command_the_deployment_runs_exists() -> None:
    from django.core.management import get_commands

    named = {argv[argv.index("manage.py") + 1] for service in _compose()["services"].values()
             if isinstance(argv := service.get("command"), list) and "manage.py" in argv}
    docs = "".join((REPO / name).read_text()
                   for name in ("README.md", "ARCHITECTURE.md", ".env.example", "docs/operations.md"))
    named |= set(re.findall(r"manage(?:\.py)? ([a-z_]+)", docs))
    assert named and named <= set(get_commands()), sorted(named - set(get_commands()))
