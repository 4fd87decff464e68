"""The code base passes mypy with the Django and DRF plugins (configuration: [tool.mypy] in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# mypy's incremental cache: created on the first run (a clean clone takes ~40 s), reused by later runs
# and by a developer's own `mypy` (same default place; mypy puts a .gitignore inside it).
CACHE = REPO / ".mypy_cache"


@pytest.mark.slow
def test_mypy_finds_nothing() -> None:
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "backend"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
