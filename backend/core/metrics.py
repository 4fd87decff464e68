"""Operational counters for /metrics: counted in process memory, published to the shared store every few seconds.

Recording is a dictionary update under a lock, never I/O, and never raises: a request, an answer or a
task must not wait for, or fail because of, its metrics. A daemon thread per process publishes what
was counted since the last publish every OPENGURU_METRICS_FLUSH_SECONDS (none while idle) to the store
every process shares (backend/core/metrics_store.py), so a scrape of any web process reports the sum
over all web processes, Celery workers and beat; a process publishes once more when it exits cleanly.
A process killed with SIGKILL loses at most one period of counts.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections import Counter as Tally
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec

from django.conf import settings
from django.db import connection

from backend.core.metrics_store import KEY_LENGTH, MetricsStore, metrics_store

logger = logging.getLogger(__name__)
P = ParamSpec("P")

LABEL_LENGTH = 40  # longer label values (a model id, a task name) are cut: keys must fit Counter.key
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_TOKEN_KINDS = {"prompt": "prompt_tokens", "completion": "completion_tokens", "cached_prompt": "cached_prompt_tokens"}


@dataclass(frozen=True)
class Spec:
    """One metric: its name (counters without `_total`, which the exposition adds), help text and label names."""

    name: str
    help: str
    labels: tuple[str, ...] = ()


HTTP_REQUESTS = Spec("openguru_http_requests", "HTTP responses by method, route name (never the raw path) and "
                     "status class.", ("method", "route", "status"))
ANSWERS = Spec("openguru_answers", "Answers that ended, by state (complete, cancelled, failed) and channel.",
               ("state", "channel"))
LLM_TOKENS = Spec("openguru_llm_tokens", "LLM tokens used by answers, by model, flow (understand, grade, "
                  "answer) and kind (prompt, completion; cached_prompt is part of prompt).", ("model", "flow", "kind"))
TASKS = Spec("openguru_celery_tasks", "Celery tasks that ended, by task name and outcome (success, failure, "
             "retry, …).", ("task", "outcome"))
STREAMS = Spec("openguru_answer_streams_in_flight", "Answers being generated now, summed over the web processes.")
COUNTERS = (HTTP_REQUESTS, ANSWERS, LLM_TOKENS, TASKS)
GAUGES = (STREAMS,)
_SPECS = {spec.name: spec for spec in (*COUNTERS, *GAUGES)}


def label(value: object) -> str:
    """A bounded label value of safe characters (others become `_`; `none` when empty).

    Model ids, task and route names keep their shape (gpt-4o-mini, qwen2.5:7b, dashboard:home); nothing
    needs escaping, so a key's length is known.
    """
    text = _UNSAFE.sub("_", str(getattr(value, "value", value)).strip())
    return text[:LABEL_LENGTH] or "none"


def series_key(spec: Spec, *values: object) -> str:
    """The store's key of one series: JSON of the metric name and its label values, in the spec's order."""
    if len(values) != len(spec.labels):
        raise ValueError(f"{spec.name} takes labels {spec.labels}, got {values!r}")
    key = json.dumps([spec.name, *(label(value) for value in values)], separators=(",", ":"))
    if len(key) > KEY_LENGTH - 40:  # room for the stores' prefixes and an instance id
        raise ValueError(f"series key too long: {key}")
    return key


def parse_series(key: str) -> tuple[Spec, tuple[str, ...]] | None:
    """The spec and label values of a stored key; None for keys this version does not know."""
    try:
        name, *values = json.loads(key)
    except (ValueError, TypeError):
        return None
    spec = _SPECS.get(name) if isinstance(name, str) else None
    if spec is None or len(values) != len(spec.labels) or not all(isinstance(v, str) for v in values):
        return None
    return spec, tuple(values)


class Recorder:
    """This process's counts since its last publish, its live gauges, and the thread that publishes them."""

    def __init__(self, store: Callable[[], MetricsStore] = metrics_store) -> None:
        self._store = store
        self._lock = threading.Lock()  # guards the tallies: held for a dictionary update only
        self._publishing = threading.Lock()  # one publish at a time (the thread, a scrape, exit)
        self._pending: Tally[str] = Tally()
        self._gauges: Tally[str] = Tally()
        self._published: dict[str, int] = {}
        self._thread: threading.Thread | None = None
        self.instance = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"

    def count(self, key: str, delta: int = 1) -> None:
        with self._lock:
            self._pending[key] += delta
        self._ensure_thread()

    def shift(self, key: str, delta: int) -> None:
        with self._lock:
            self._gauges[key] += delta
        self._ensure_thread()

    def pending(self) -> dict[str, int]:
        with self._lock:
            return dict(self._pending)

    def publish(self, *, final: bool = False) -> bool:
        """Send the counts since the last publish and, when they changed or must be refreshed, the gauges.

        `final` (the process is exiting) withdraws this process's gauges. A failed publish keeps the
        counts for the next one and logs why; it never raises.
        """
        with self._publishing:
            with self._lock:
                counts, self._pending = self._pending, Tally()
                gauges = {} if final else {key: value for key, value in self._gauges.items() if value}
            # Non-zero gauges are re-sent every time so they do not expire; zeros only once.
            send = gauges if gauges or gauges != self._published else None
            if not counts and send is None:
                return True
            try:
                self._store().publish(counts, send, instance=self.instance, ttl=_gauge_ttl())
            except Exception as exc:  # the store is down or locked: keep the counts, try again next period
                with self._lock:
                    self._pending.update(counts)
                logger.warning("metrics: could not publish %d series (kept for the next try): %s", len(counts), exc)
                return False
            if send is not None:
                self._published = send
            return True

    def _ensure_thread(self) -> None:
        if self._thread is not None or settings.OPENGURU_METRICS_FLUSH_SECONDS <= 0:
            return
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, args=(float(settings.OPENGURU_METRICS_FLUSH_SECONDS),),
                                            name="metrics-publisher", daemon=True)
            self._thread.start()
        _register_exit_publish()

    def _run(self, period: float) -> None:
        while True:
            time.sleep(period)  # a period, not a wait for a condition: publishing is periodic by design
            try:
                self.publish()
            finally:
                connection.close()  # this thread's own connection: hold none between publishes


@functools.cache
def _register_exit_publish() -> None:
    # Once per process that publishes in the background (a forked child inherits the registration,
    # and publish_at_exit acts on the child's own recorder).
    atexit.register(publish_at_exit)


def _gauge_ttl() -> float:
    # Three missed periods before a silent process's gauges stop counting (at least 15 s).
    return max(15.0, 3.0 * settings.OPENGURU_METRICS_FLUSH_SECONDS)


_recorder = Recorder()


def _new_recorder_in_child() -> None:
    # A forked child (Celery's pool) inherits the parent's unpublished counts, which the parent publishes
    # itself, and no publisher thread: it starts empty, under an instance id of its own.
    global _recorder
    _recorder = Recorder()


os.register_at_fork(after_in_child=_new_recorder_in_child)


def recorder() -> Recorder:
    """This process's recorder (a new one after a fork)."""
    return _recorder


def _never_raises(record: Callable[P, None]) -> Callable[P, None]:
    """Recording is best effort: a bad value is logged, never raised into the request or task."""

    @functools.wraps(record)
    def safe(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            record(*args, **kwargs)
        except Exception:
            logger.exception("metrics: could not record %s", record.__name__)

    return safe


@_never_raises
def request_finished(method: str, route: str, status: int) -> None:
    """One HTTP response; `route` is the URL pattern's name, never the path (bounded label values)."""
    method = method.upper() if method and method.upper() in _METHODS else "other"
    _recorder.count(series_key(HTTP_REQUESTS, method, route, f"{int(status) // 100}xx"))


@_never_raises
def answer_finished(*, state: str, channel: str, usage: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """An answer ended (complete, cancelled or failed), with the token usage per flow it recorded."""
    _recorder.count(series_key(ANSWERS, label(state).lower(), label(channel).lower()))
    for flow, used in (usage or {}).items():
        for kind, field in _TOKEN_KINDS.items():
            if tokens := int(used.get(field) or 0):
                _recorder.count(series_key(LLM_TOKENS, used.get("model") or "unknown", flow, kind), tokens)


@_never_raises
def stream_opened() -> None:
    """An answer stream started generating (pair with stream_closed, e.g. in try/finally)."""
    _recorder.shift(series_key(STREAMS), 1)


@_never_raises
def stream_closed() -> None:
    """An answer stream ended, however it ended."""
    _recorder.shift(series_key(STREAMS), -1)


@_never_raises
def task_finished(task: str, outcome: str) -> None:
    """A Celery task ended with a state (SUCCESS, FAILURE, RETRY, …)."""
    _recorder.count(series_key(TASKS, task, label(outcome).lower()))


def publish() -> bool:
    """Publish this process's counts now (a scrape does, so it includes the process serving it)."""
    return _recorder.publish()


def publish_at_exit(**_: Any) -> None:
    """The last publish of a process that stops cleanly: its counts, and its gauges withdrawn."""
    _recorder.publish(final=True)  # never raises: a failure is logged
    try:
        connection.close()
    except Exception as exc:  # the process is going away; a broken connection must not stop that
        logger.warning("metrics: closing the database connection at exit failed: %s", exc)


def _task_postrun(sender: Any = None, state: str | None = None, **_: Any) -> None:
    task_finished(getattr(sender, "name", None) or "unknown", state or "unknown")


def connect_signals() -> None:
    """Count Celery tasks, and publish when a process exits (Celery's pool processes skip atexit)."""
    from celery import signals

    signals.task_postrun.connect(_task_postrun, weak=False, dispatch_uid="openguru-metrics-task")
    signals.worker_process_shutdown.connect(publish_at_exit, weak=False, dispatch_uid="openguru-metrics-child")
    signals.worker_shutdown.connect(publish_at_exit, weak=False, dispatch_uid="openguru-metrics-worker")
