"""Restore an archive written by export_data into this install, and check that nothing was lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.core.locks import LockNotAcquired
from backend.portability.archive import ArchiveError
from backend.portability.importing import ImportOptions, ImportReport, import_install


class Command(BaseCommand):
    help = "Import an archive from export_data into an empty install (--replace: instead of what it holds)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The archive export_data wrote.")
        parser.add_argument("--key-file", type=Path, help="The archive's key for its secrets (default: FILE.key).")
        parser.add_argument("--without-secrets", action="store_true",
                            help="Import without integration and repository tokens (re-enter them afterwards).")
        parser.add_argument("--replace", action="store_true",
                            help="Delete every guru (sources, questions, files, vectors) and API key here first.")
        parser.add_argument("--vectors-only", action="store_true",
                            help="Only refill the vector store, for gurus the database holds (after pg_restore).")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"].resolve()
        if not path.is_file():
            raise CommandError(f"No archive at {path}.")
        opts = ImportOptions(key_file=options["key_file"], without_secrets=options["without_secrets"],
                             replace=options["replace"], vectors_only=options["vectors_only"])
        try:
            report = import_install(path, opts)
        except (ArchiveError, LockNotAcquired) as exc:
            raise CommandError(str(exc)) from exc
        self._print(report)

    def _print(self, report: ImportReport) -> None:
        if report.migrated:
            self.stdout.write("The database was new: migrated it first.")
        if report.replaced:
            self.stdout.write("Replaced: " + ", ".join(f"{n} {label}" for label, n in report.replaced.items()))
        for label, count in report.rows.items():
            self.stdout.write(f"  {label:<26} {count:>9} of {report.expected.get(label, 0)}")
        if report.users_kept:
            self.stdout.write(f"  kept as they are here (matched by name): {', '.join(report.users_kept)}")
        if report.kind != "vectors":
            self.stdout.write(f"  {'media files':<26} {report.media_files:>9}")
        for name in report.media_missing:
            self.stderr.write(f"warning: {name} was not in the archive (missing when it was exported)")
        if report.secrets or report.secrets_dropped:
            self.stdout.write(f"  secrets re-encrypted with this install's key: {report.secrets}; left out: "
                              f"{report.secrets_dropped}")
        if report.older_schema:
            self.stdout.write("  the archive's schema is older: fields added since take their defaults")
        for result in report.vectors:
            line = f"  vectors of {result.slug:<15} {result.chunks:>9}  {result.action} into {result.collection}"
            if result.action == "re-indexing":
                line += f" (the archive's embedder differs; {len(result.reindexed_sources)} source(s) queued)"
            elif result.reindexed_sources:
                line += (f"; source(s) {', '.join(map(str, result.reindexed_sources))} queued for re-indexing "
                         "(their live chunks differ from their row: indexed between the two halves of the backup)")
            self.stdout.write(line)
        self.stdout.write(self.style.SUCCESS("Import complete; every count matches the archive."))
