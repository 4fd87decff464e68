"""Rebuild gurus' vector collections for the configured embedder and queue their sources to re-index."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.core.locks import cache_lock
from backend.gurus.models import Guru
from backend.gurus.selectors import guru_collection_reports
from backend.gurus.services import collection_lock_name
from backend.sources.services import source_reembed_guru


class Command(BaseCommand):
    help = "Re-embed gurus after changing OPENGURU_EMBEDDER: drop and rebuild their collections, re-index sources."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="*", help="Gurus to re-embed (default with --all: every mismatched one).")
        parser.add_argument("--all", action="store_true", help="Every guru whose collection needs it.")
        parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:
            gurus = [r.guru for r in guru_collection_reports() if r.embedder_changed or r.dimension_changed]
        else:
            gurus = list(Guru.objects.filter(slug__in=options["slugs"]))
            missing = set(options["slugs"]) - {g.slug for g in gurus}
            if missing:
                raise CommandError(f"No guru with slug {', '.join(sorted(missing))}.")
        if not gurus:
            self.stdout.write("Nothing to re-embed.")
            return
        names = ", ".join(g.slug for g in gurus)
        self.stdout.write(f"Re-embedding drops the vectors of: {names}. They answer nothing until re-indexed.")
        if not options["yes"] and input("Continue? [y/N] ").strip().lower() != "y":
            raise CommandError("Aborted.")
        for guru in gurus:
            with cache_lock(collection_lock_name(guru.pk), wait=60):
                count = source_reembed_guru(guru_id=guru.pk)
            self.stdout.write(f"{guru.slug}: collection rebuilt; {count} source(s) marked PENDING for re-indexing.")
