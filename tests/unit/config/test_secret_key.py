"""The embedded default's generated SECRET_KEY: processes starting together on a fresh data dir agree on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROCESSES = 12
READ_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


@pytest.mark.slow
def test_processes_starting_together_share_one_complete_key(tmp_path: Path) -> None:
    # uvicorn --workers N (or web and worker) import the settings at the same moment on a first start.
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    env.update(OPENGURU_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    started = [subprocess.Popen([sys.executable, "-c", READ_KEY], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    results = [(process.wait(timeout=120), process.communicate()) for process in started]

    keys = {out.strip() for _, (out, _) in results}
    assert [code for code, _ in results] == [0] * PROCESSES, [err for _, (_, err) in results if err]
    assert len(keys) == 1 and len(keys.pop()) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
    assert sorted(path.name for path in tmp_path.iterdir() if "secret" in path.name) == ["secret_key"]
