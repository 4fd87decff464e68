"""Ready a data dir for a start in one process: migrate, collect static files (if changed), checks, first admin."""

from __future__ import annotations

import io
from argparse import ArgumentParser
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from backend.core.static_files import collect_static_if_changed


class Command(BaseCommand):
    help = ("Migrate, collect static files, run the deploy checks of the given tags and create the first "
            "administrator; prints only what ensure_admin prints.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--manage-command", default="python manage.py",
                            help="How the user runs management commands, for the password-reset hint.")
        parser.add_argument("--check-tag", action="append", default=[], dest="check_tags",
                            help="Run the deploy checks of this tag after migrating (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        # One interpreter instead of four: each `manage.py` run spends over a second importing the project,
        # and these steps ran one after another on every start.
        quiet = io.StringIO()
        call_command("migrate", interactive=False, stdout=quiet)
        collect_static_if_changed()
        if options["check_tags"]:
            # After migrating, as the checks read the gurus; before the admin, so a failed check creates nobody.
            call_command("check", deploy=True, tags=options["check_tags"], fail_level="ERROR", stdout=quiet)
        call_command("ensure_admin", manage_command=options["manage_command"], stdout=self.stdout)
