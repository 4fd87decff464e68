"""The code base passes the project's ruff configuration (pyproject.toml) and its size limits."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    result = subprocess.run([ruff, "check", "backend", "tests", "bench"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _python_files(*roots: str) -> list[Path]:
    return [path for root in roots for path in (REPO / root).rglob("*.py") if "migrations" not in path.parts]


def test_modules_stay_under_400_lines() -> None:
    long = [f"{p.relative_to(REPO)}: {n}" for p in _python_files("backend", "bench", "tests")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400]
    assert not long, long


def test_functions_stay_under_50_lines() -> None:
    """Application and bench code; browser scenario tests read as one user journey and are exempt."""
    long = []
    for path in _python_files("backend", "bench"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 50:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
