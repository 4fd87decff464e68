"""Show each guru's vector collection (name, dimension, rows, problems); optionally re-sync them."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from backend.gurus import services
from backend.gurus.selectors import guru_collection_reports


class Command(BaseCommand):
    help = "List gurus' vector collections with stats; --sync converges them now (in this process)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sync", action="store_true", help="Create/rename collections to match slugs.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["sync"]:
            for report in guru_collection_reports():
                services.guru_collection_sync(guru_id=report.guru.pk)
        reports = guru_collection_reports()
        if not reports:
            self.stdout.write("No gurus yet.")
            return
        self.stdout.write(f"{'guru':<24} {'collection':<32} {'dim':>5} {'rows':>8}  status")
        for r in reports:
            dim = str(r.info.dimension) if r.info else "-"
            rows = str(r.info.row_count) if r.info else "-"
            status = r.problem or "ok"
            self.stdout.write(f"{r.guru.slug:<24} {r.expected_name:<32} {dim:>5} {rows:>8}  {status}")
