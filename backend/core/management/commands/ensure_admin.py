"""Create the first administrator if there is none, and print its login once."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand

from backend.core.services import admin_ensure


class Command(BaseCommand):
    help = "Create the first superuser (if none exists) and print its credentials once."

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = admin_ensure(
            username=os.environ.get("OPENGURU_ADMIN_USERNAME", "admin"),
            email=os.environ.get("OPENGURU_ADMIN_EMAIL", ""),
            password=os.environ.get("OPENGURU_ADMIN_PASSWORD", ""),
        )
        if credentials is None:
            self.stdout.write("An administrator already exists (reset a password: manage.py changepassword).")
            return
        self.stdout.write(self.style.SUCCESS("Created the first administrator. This is shown only once:"))
        self.stdout.write(f"  username: {credentials.username}")
        self.stdout.write(f"  password: {credentials.password}")
