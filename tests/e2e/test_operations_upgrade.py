"""Upgrading: no model change lacks its migration, and the launcher applies pending migrations at start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.product import PROFILE_VARIABLES, REPO, launch, stop

pytestmark = pytest.mark.slow

COUNT = ("from backend.answering.models import Question; from backend.gurus.models import Guru; "
         "print(Guru.objects.count(), Question.objects.count())")
SEED = ("from backend.gurus.models import Guru; from backend.answering.models import Question; "
        "guru = Guru.objects.create(slug='kept', name='Kept', domain_knowledge='upgrades'); "
        "Question.objects.create(guru=guru, user_question='q', question='q', slug='q', content='a')")


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PROFILE_VARIABLES}
    env.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_every_model_change_has_its_migration(tmp_path: Path) -> None:
    done = _manage(tmp_path, "makemigrations", "--check", "--dry-run")
    assert done.returncode == 0 and "No changes detected" in done.stdout, done.stdout + done.stderr


def test_the_launcher_migrates_an_older_database_and_keeps_its_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    product = launch(data)
    stop(product)
    assert _manage(data, "shell", "-c", SEED).returncode == 0
    # The database as the previous release left it: the newest answering migration not applied yet.
    assert _manage(data, "migrate", "answering", "0003").returncode == 0
    assert _manage(data, "migrate", "--check").returncode == 1
    assert "[ ] 0004_question_state" in _manage(data, "showmigrations", "answering").stdout

    product = launch(data)  # `./openguru start` after pulling a new release
    stop(product)

    assert _manage(data, "migrate", "--check").returncode == 0
    assert "[X] 0004_question_state" in _manage(data, "showmigrations", "answering").stdout
    assert _manage(data, "shell", "-c", COUNT).stdout.split()[-2:] == ["1", "1"]
