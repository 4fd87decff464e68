"""Write this install's data (gurus, sources and their files, questions, settings, keys, vectors) to an archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.portability.archive import KIND_VECTORS
from backend.portability.exporting import export_install


class Command(BaseCommand):
    help = ("Export gurus, sources (with uploaded files), questions and sessions, settings, accounts, API keys "
            "(hashed), integrations (tokens sealed with a key written to FILE.key) and vectors to FILE.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The archive to write (a zip file).")
        parser.add_argument("--vectors-only", action="store_true",
                            help="Only the vectors: the Milvus half of a backup whose database half is pg_dump.")
        parser.add_argument("--without-secrets", action="store_true",
                            help="Leave integration and repository tokens out (no key file is written).")
        parser.add_argument("--force", action="store_true", help="Overwrite FILE if it exists.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"].resolve()
        if path.exists() and not options["force"]:
            raise CommandError(f"{path} exists; choose another name or pass --force.")
        if not path.parent.is_dir():
            raise CommandError(f"The directory {path.parent} does not exist.")
        report = export_install(path, vectors_only=options["vectors_only"],
                                with_secrets=not options["without_secrets"])
        for label, count in report.rows.items():
            self.stdout.write(f"  {label:<26} {count:>9}")
        if report.kind != KIND_VECTORS:
            self.stdout.write(f"  {'media files':<26} {report.media_files:>9}  ({report.media_bytes} bytes)")
        for entry in report.collections:
            self.stdout.write(f"  vectors of {entry['slug']:<15} {entry['chunks']:>9}  ({entry['embedder']}, "
                              f"{entry['dimension']}-d)")
        for name in report.media_missing:
            self.stderr.write(f"warning: {name} is referenced but missing from the media storage; not exported")
        if report.key_file:
            self.stdout.write(f"{report.secrets} secret(s) are sealed with the key in {report.key_file}: keep it "
                              "apart from the archive; import_data needs it.")
        elif report.secrets_omitted:
            self.stdout.write(f"{report.secrets_omitted} secret(s) left out (--without-secrets).")
        self.stdout.write(self.style.SUCCESS(f"Exported to {path} ({path.stat().st_size} bytes)."))
