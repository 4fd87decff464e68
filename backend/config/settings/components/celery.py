"""Celery: Redis broker when REDIS_URL is set, else our crash-safe filesystem transport (no server)."""

from pathlib import Path

from backend.config.env import env_bool, env_int, env_path, env_str
from backend.core.broker import SCHEME, register

register()  # the `openguru-fs://` alias must exist in every process that publishes or consumes

_DATA_DIR = env_path("OPENGURU_DATA_DIR", Path(__file__).resolve().parents[4] / "var")
_REDIS_URL = env_str("REDIS_URL")

if _REDIS_URL:
    CELERY_BROKER_URL = _REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {"visibility_timeout": 3600}
else:
    _BROKER_DIR = _DATA_DIR / "broker"
    for _sub in ("queue", "control", "unacked", "quarantine", "tmp"):
        (_BROKER_DIR / _sub).mkdir(parents=True, exist_ok=True)
    # kombu's filesystem transport with atomic publish, claim-by-rename, redelivery of a dead
    # consumer's claims and a quarantine (backend/core/broker.py; chosen over SQLAlchemy on SQLite
    # in ARCHITECTURE.md). Producer and worker share one absolute queue folder; 0.05 s polling
    # (bench/broker.py: 0.1 s capped a busy worker at ~35 tasks/s, 0.02 s doubled idle CPU).
    CELERY_BROKER_URL = f"{SCHEME}://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "control_folder": str(_BROKER_DIR / "control"),
        "unacked_folder": str(_BROKER_DIR / "unacked"),
        "quarantine_folder": str(_BROKER_DIR / "quarantine"),
        "tmp_folder": str(_BROKER_DIR / "tmp"),
        "polling_interval": 0.05,
    }

CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SOFT_TIME_LIMIT = 25 * 60
CELERY_TASK_TIME_LIMIT = 30 * 60
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Beat only finds due work and fans it out; the work itself runs in ordinary tasks.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "sources-check-for-due": {"task": "sources.check_for_due", "schedule": 15 * 60.0},
    # Re-queue runs whose task died (worker killed, message lost): nothing waits forever.
    "sources-recover-stalled": {"task": "sources.recover_stalled", "schedule": 60.0},
    # Answers cut off by a dead web process are marked FAILED ("interrupted") instead of pending forever.
    "answering-fail-abandoned": {"task": "answering.fail_abandoned", "schedule": 5 * 60.0},
}

# Added to the niceness of worker processes (0: as the web's): ingestion must not starve answers of CPU.
OPENGURU_WORKER_NICENESS = env_int("OPENGURU_WORKER_NICENESS", 10)
