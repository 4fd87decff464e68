"""Create the first administrator if there is none, and print its login once."""

from __future__ import annotations

import os
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from backend.core.services import admin_ensure


class Command(BaseCommand):
    help = "Create the first superuser (if none exists) and print its credentials once."

    def add_arguments(self, parser: ArgumentParser) -> None:
        # The launcher passes `./openguru manage`, so the hint is a command that works where it is printed.
        parser.add_argument("--manage-command", default="python manage.py",
                            help="How the user runs management commands, for the password-reset hint.")

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = admin_ensure(
            username=os.environ.get("OPENGURU_ADMIN_USERNAME", "admin"),
            email=os.environ.get("OPENGURU_ADMIN_EMAIL", ""),
            password=os.environ.get("OPENGURU_ADMIN_PASSWORD", ""),
        )
        manage = options["manage_command"]
        if credentials is None:
            names = list(get_user_model().objects.filter(is_superuser=True, is_active=True)
                         .order_by("pk").values_list("username", flat=True)[:3])
            name = names[0] if names else "<username>"
            self.stdout.write(f"An administrator already exists: {', '.join(names) or 'none active'} "
                              f"(forgot the password? {manage} changepassword {name})")
            return
        self.stdout.write(self.style.SUCCESS("Created the first administrator. This is shown only once:"))
        self.stdout.write(f"  username: {credentials.username}")
        self.stdout.write(f"  password: {credentials.password}")
        self.stdout.write(f"  (change it later: {manage} changepassword {credentials.username})")
