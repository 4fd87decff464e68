"""The Celery application; configured from Django settings (CELERY_* names)."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.config.settings.base")

app = Celery("openguru")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _lower_priority(**_: object) -> None:
    """Ingestion yields the CPU to answering: web processes keep their priority, workers run niced.

    Embedding a large source saturates every core; without this, answers wait behind it (bench/load.py).
    Pool processes fork from this one and inherit the niceness; beat is not a worker and keeps its own.
    """
    from django.conf import settings

    increment = int(getattr(settings, "OPENGURU_WORKER_NICENESS", 0))
    if increment > 0:
        os.nice(increment)
