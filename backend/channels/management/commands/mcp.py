"""`./openguru manage mcp <guru-slug>`: serve one guru's MCP tools over stdio, as the local operator."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.channels.mcp.auth import local_caller
from backend.channels.mcp.server import build_server


class Command(BaseCommand):
    help = "Serve a guru's MCP tools (ask, search, list_gurus) over stdio for a local AI agent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("guru", help="The slug of the guru to serve.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            caller = local_caller(options["guru"])
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
        # stdout is the protocol: our logging writes to stderr (settings LOGGING), and while it serves the
        # SDK points file descriptor 1 at stderr, so a library or child process that prints cannot corrupt it.
        build_server(lambda _ctx: caller).run("stdio")
