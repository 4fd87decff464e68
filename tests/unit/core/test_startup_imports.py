"""Every process loads the project (settings, models, URLs) at start; what only some of them use is imported late.

Measured on a 2-core machine: langchain's text splitters cost 0.3 s, discord.py with aiohttp 0.3 s and
drf-spectacular 0.2 s of CPU in every web, worker, listener and `manage.py` process, which the launcher starts
five of at each start. Ingestion, the Discord process and schema generation import them when they need them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LATE = ("langchain_text_splitters", "langchain_core", "discord", "aiohttp")
PROBE = f"""
import json, sys, django
django.setup()
after_setup = sorted(m for m in {LATE!r} if m in sys.modules)
from django.urls import get_resolver
get_resolver().url_patterns
print(json.dumps([after_setup, sorted(m for m in {LATE!r} if m in sys.modules),
                  "drf_spectacular" in sys.modules]))
"""


def _loaded(tmp_path: Path) -> list[object]:
    drop = {"DATABASE_URL", "REDIS_URL", "MILVUS_URI"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(OPENGURU_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="backend.config.settings.base")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded: list[object] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_loading_the_project_and_its_urls_leaves_the_heavy_optional_libraries_out(tmp_path: Path) -> None:
    after_setup, after_urls, spectacular = _loaded(tmp_path)

    assert after_setup == []
    assert after_urls == []
    assert spectacular  # the API's views use its decorators: loading the URLs registers the schema extension
