"""Collect static files only when they changed since the last collection (each start asks; most find nothing new)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command

STAMP_SUFFIX = ".collected"  # beside the root, not in it: WhiteNoise serves every file under STATIC_ROOT


def source_fingerprint() -> tuple[str, list[str]]:
    """A hash of every static file the finders see (path, size, modification time), and their paths."""
    rows: list[str] = []
    paths: list[str] = []
    for finder in finders.get_finders():
        for path, storage in finder.list(["CVS", ".*", "*~"]):
            stat = Path(storage.path(path)).stat()
            rows.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
            paths.append(path)
    rows.sort()
    storage_backend = settings.STORAGES["staticfiles"]["BACKEND"]
    digest = hashlib.sha256("\n".join([storage_backend, *rows]).encode()).hexdigest()
    return digest, paths


def collect_static_if_changed() -> bool:
    """Run collectstatic unless the collected tree already holds exactly these sources; whether it ran.

    collectstatic itself copies only changed files, but WhiteNoise re-compresses every file on every run (about
    a CPU-second here), which every start of an unchanged checkout paid for nothing.
    """
    root = Path(settings.STATIC_ROOT)
    stamp = root.with_name(root.name + STAMP_SUFFIX)
    digest, paths = source_fingerprint()
    # A file removed from the collected tree by hand is collected again, whatever the stamp says.
    if stamp.is_file() and stamp.read_text() == digest and all((root / path).is_file() for path in paths):
        return False
    stamp.unlink(missing_ok=True)  # a collection that fails half-way must not leave a stamp saying it is whole
    call_command("collectstatic", interactive=False, stdout=io.StringIO())
    stamp.write_text(digest)
    return True
