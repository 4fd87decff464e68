"""A Celery app on the product's broker settings whose one task records that it ran (broker tests)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.config.settings.base")

# No Django fixup: these tests are about the broker, so the worker needs no models or URL checks.
app = Celery("openguru-stress", fixups=[])
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_always_eager = False
if os.environ.get("OPENGURU_STRESS_BROKER_URL"):  # bench/broker.py compares another transport
    # kombu's SQLAlchemy transport hands every option to create_engine(), which refuses
    # polling_interval, so it polls at kombu's default of 1 s.
    app.conf.update(broker_url=os.environ["OPENGURU_STRESS_BROKER_URL"], broker_transport_options={})


@app.task(name="stress.record", acks_late=True)
def record(key: str, out: str, delay: float = 0.0, pad: str = "") -> None:
    """Append `key` to the file `out`; one short O_APPEND write, so lines never interleave.

    `pad` only makes the message big, so publishing it takes long enough for a reader to meet it.
    """
    if delay:
        time.sleep(delay)  # stands in for work the worker is in the middle of when killed
    with Path(out).open("a") as handle:
        handle.write(key + "\n")


@app.task(name="stress.stamp", acks_late=True)
def stamp(key: str, out: str) -> None:
    """Append `key` and the wall-clock time the task started (publish-to-start latency)."""
    started = time.time()
    with Path(out).open("a") as handle:
        handle.write(f"{key} {started:.6f}\n")
