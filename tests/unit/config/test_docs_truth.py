"""The deployment files and the docs name only what exists: commands, the pipeline's libraries."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import yaml
from django.core.management import get_commands

REPO = Path(__file__).resolve().parents[3]
# The distribution ARCHITECTURE.md names for each module the pipeline may import (.importlinter).
PIPELINE_DISTRIBUTIONS = {"numpy": "numpy", "defusedxml": "defusedxml", "protego": "protego",
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


def test_architecture_names_what_the_pipeline_may_import() -> None:
    # tests/unit/test_layers.py enforces the contract; this keeps the prose naming the same libraries.
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    allowed = config["importlinter:contract:pipeline-small-libraries"]["allowed_externals"].split()
    assert allowed, "the pipeline's allow-list is empty"
    layers = (REPO / "ARCHITECTURE.md").read_text().split("## Apps")[0]
    assert "imports only the standard library" not in layers
    for module in allowed:
        assert PIPELINE_DISTRIBUTIONS[module] in layers, module


def test_docs_do_not_claim_bots_that_do_not_run() -> None:
    known = set(get_commands())
    if {"slack_socket", "discord_listener"} & known:
        return
    for doc in ("README.md", "ARCHITECTURE.md", "Dockerfile"):
        text = (REPO / doc).read_text()
        for claim in ("Slack handler", "Discord listener", "in Slack or Discord", "migrate, discord"):
            assert claim not in text, f"{doc}: {claim!r}"
