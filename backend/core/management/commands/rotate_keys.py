"""Re-encrypt every stored secret with the current OPENGURU_ENCRYPTION_KEY (old keys as fallbacks)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.core.keys import rotate_encrypted_values


class Command(BaseCommand):
    help = (
        "Re-encrypt stored secrets (integration tokens, the chat provider's API key) with the current encryption "
        "key. Run it after setting a new OPENGURU_ENCRYPTION_KEY (or DJANGO_SECRET_KEY) with the old one in "
        "OPENGURU_ENCRYPTION_KEY_FALLBACKS (or DJANGO_SECRET_KEY_FALLBACKS); then the fallback can go."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Count what would change; write nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = rotate_encrypted_values(dry_run=options["dry_run"])
        verb = "would re-encrypt" if options["dry_run"] else "re-encrypted"
        for report in reports:
            self.stdout.write(f"{report.label}: {verb} {report.rotated + report.plain}, already current "
                              f"{report.current}, undecryptable {len(report.failed)}")
        failed = [f"{r.label} ({', '.join(r.failed)})" for r in reports if r.failed]
        if failed:
            raise CommandError(
                "No configured key decrypts: " + "; ".join(failed) + ". Add the key they were saved with to "
                "OPENGURU_ENCRYPTION_KEY_FALLBACKS and run again, or re-enter those tokens."
            )
        total = sum(r.rotated + r.plain for r in reports)
        self.stdout.write(self.style.SUCCESS(
            f"{'Dry run: ' if options['dry_run'] else ''}{total} secret(s) {verb}; every stored secret is readable "
            "with the current key" + (" once this runs without --dry-run." if options["dry_run"] and total else ".")
        ))
