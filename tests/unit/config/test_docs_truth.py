"""The deployment files and the docs name only what exists: commands, imports of the pipeline."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import yaml
from django.core.management import get_commands

REPO = Path(__file__).resolve().parents[3]
# What ARCHITECTURE.md says `pipeline` may import besides the standard library and itself.
PIPELINE_THIRD_PARTY = {"numpy": "numpy", "defusedxml": "defusedxml", "protego": "protego",
                        "langchain_text_splitters": "langchain-text-splitters"}
_MANAGE = re.compile(r"(?:manage\.py|openguru manage|manage)\s+([a-z][a-z0-9_]+)")


def _compose_commands() -> dict[str, str]:
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    commands = {}
    for name, service in services.items():
        command = service.get("command", "")
        commands[name] = " ".join(command) if isinstance(command, list) else str(command)
    return commands


def test_every_compose_service_runs_a_command_that_exists() -> None:
    known = set(get_commands())
    for service, command in _compose_commands().items():
        for name in _MANAGE.findall(command):
            assert name in known, f"compose service {service!r} runs `manage.py {name}`, which does not exist"


def test_compose_profiles_are_only_optional_vendor_services() -> None:
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    profiled = {name: service["profiles"] for name, service in services.items() if "profiles" in service}
    # A profile for a bot would advertise a process this version does not have.
    assert profiled == {"reranker": ["reranker"]}


def test_commands_named_in_the_docs_exist() -> None:
    known = set(get_commands())
    for doc in ("README.md", "ARCHITECTURE.md", "docs/operations.md"):
        for line in (REPO / doc).read_text().splitlines():
            for name in re.findall(r"`[^`]*?(?:manage\.py|openguru manage) ([a-z][a-z0-9_]+)[^`]*`", line):
                assert name in known, f"{doc} names `manage {name}`, which does not exist"


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module)
    return roots


def test_pipeline_imports_what_architecture_says() -> None:
    allowed = set(sys.stdlib_module_names) | set(PIPELINE_THIRD_PARTY)
    for path in (REPO / "backend" / "pipeline").rglob("*.py"):
        for module in _imported_roots(path):
            if module.startswith("backend."):
                assert module.startswith("backend.pipeline"), f"{path.name} imports {module}"
            else:
                assert module.split(".")[0] in allowed, f"{path.name} imports {module}"
    architecture = (REPO / "ARCHITECTURE.md").read_text()
    assert "imports only the standard library" not in architecture.split("## Apps")[0]
    for package in PIPELINE_THIRD_PARTY.values():
        assert package in architecture.split("## Apps")[0], package


def test_docs_do_not_claim_bots_that_do_not_run() -> None:
    known = set(get_commands())
    if {"slack_socket", "discord_listener"} & known:
        return
    for doc in ("README.md", "ARCHITECTURE.md", "Dockerfile"):
        text = (REPO / doc).read_text()
        for claim in ("Slack handler", "Discord listener", "in Slack or Discord", "migrate, discord"):
            assert claim not in text, f"{doc}: {claim!r}"
