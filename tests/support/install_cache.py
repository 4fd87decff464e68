"""A new data dir for a launcher test, started from what every first start makes the same way.

A first start migrates an empty SQLite database (about 3 CPU-seconds of applying migrations) and collects the
static files (about one of compressing them); the launch tests start about thirty new data dirs, on a 2-core
machine. Each test process makes both once, then copies them into every data dir that has no database yet, so
the launcher finds nothing to migrate and a stamp saying the static files are collected, as on any restart.
Tests of the first start itself (`launch(..., new_install=True)`) get nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATABASE = "openguru.sqlite3"
MAKE = ("from django.core.management import call_command; call_command('migrate', interactive=False, verbosity=0); "
        "from backend.core.static_files import collect_static_if_changed; collect_static_if_changed()")
_made: list[Path] = []


def _template(environment: Callable[[Path], dict[str, str]]) -> Path:
    if not _made:
        work = Path(tempfile.mkdtemp(prefix="openguru-install-"))
        subprocess.run([sys.executable, "manage.py", "shell", "-c", MAKE], cwd=REPO, env=environment(work),
                       check=True, capture_output=True, timeout=300)
        _made.append(work)
    return _made[0]


def prefill(data_dir: Path, environment: Callable[[Path], dict[str, str]]) -> None:
    """Copy the migrated database and the collected static files into `data_dir` if it has no database yet."""
    if (data_dir / DATABASE).exists():
        return
    template = _template(environment)
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(template / DATABASE, data_dir / DATABASE)
    if not (data_dir / "static").exists():
        shutil.copytree(template / "static", data_dir / "static", copy_function=os.link)
        shutil.copy2(template / "static.collected", data_dir / "static.collected")
