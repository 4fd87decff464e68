"""A web process does not load the MCP SDK until /mcp/ is first asked (it costs ~0.5 s of CPU per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = ("import sys, backend.config.asgi; "
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types', 'starlette', 'sse_starlette'}))")


def test_the_asgi_app_starts_without_importing_the_mcp_sdk(tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "backend.config.settings.base", "OPENGURU_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
