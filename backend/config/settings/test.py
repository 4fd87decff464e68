"""Test settings: eager tasks, fast hashing, in-memory fakes unless a test asks for real Milvus."""

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

# pytest-xdist runs the suite in several processes: each gets a data dir of its own (the filesystem broker's
# queues, the test database, the secret key), as two installs would. Processes a test starts inherit the
# variable already pointing there.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_SHARED_DIR = os.environ.get("OPENGURU_DATA_DIR", "")
if _WORKER and _SHARED_DIR and Path(_SHARED_DIR).name != _WORKER:
    os.environ["OPENGURU_DATA_DIR"] = str(Path(_SHARED_DIR) / _WORKER)
# On the production pass they share one Redis server: each process keeps to its own block of 16 databases
# (the test Redis has 1024, enough for 64 processes): its own queue, cache and counters. Tests that take a
# database of their own for a topology add their number to this base.
TEST_REDIS_DB_BASE = 16 * int(_WORKER[2:]) if _WORKER.startswith("gw") and _WORKER[2:].isdigit() else 0
_REDIS = os.environ.get("REDIS_URL", "")
if TEST_REDIS_DB_BASE and _REDIS and not os.environ.get("OPENGURU_TEST_REDIS_DB_MOVED"):
    _parts = urlsplit(_REDIS)
    _db = int(_parts.path.strip("/") or 0)
    os.environ["REDIS_URL"] = urlunsplit(_parts._replace(path=f"/{TEST_REDIS_DB_BASE + _db}"))
    os.environ["OPENGURU_TEST_REDIS_DB_MOVED"] = "1"  # processes a test starts inherit the moved URL

from backend.config.env import env_int  # noqa: E402
from backend.config.settings.base import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
OPENGURU_VECTOR_STORE = {"BACKEND": "memory", "URI": "", "TOKEN": ""}
OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "384"}
OPENGURU_LLM = {"PROVIDER": "offline", "MODEL": "offline-extractive"}
OPENGURU_RERANKER = {"BACKEND": "local"}
LOGGING["loggers"]["backend"]["level"] = "WARNING"  # noqa: F405
# Every test client shares 127.0.0.1 and cache counters outlive tests: tests that check limits set them.
OPENGURU_WEB_RATE_LIMIT = 0
# Counts stay in memory until this process serves /metrics: no background thread writing to a test database
# (real processes started by tests set the variable).
OPENGURU_METRICS_FLUSH_SECONDS = env_int("OPENGURU_METRICS_FLUSH_SECONDS", 0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, as in the product: the in-memory test database shares one cache between threads, where a
    # read overlapping a worker thread's write fails that write at once ("table is locked") instead of
    # waiting on the busy timeout, which made tests with a live worker flaky.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}  # noqa: F405
# In-process tests do not run collectstatic; the launcher and compose do (see base.py).
WHITENOISE_USE_FINDERS = True
# Celery workers started inside the test process (tests/support/celery_worker.py) must not renice pytest
# itself, and with it every process a later test starts.
OPENGURU_WORKER_NICENESS = 0
OPENGURU_SUMMARIES = False  # tests of summaries turn them on (tests/support/summaries.py); others keep their rows
