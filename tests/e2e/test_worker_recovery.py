"""The embedded product survives its worker: SIGKILL mid-indexing, lost messages, abandoned generations."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import urllib.request
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pymilvus import MilvusClient

from backend.core.sidecars import Sidecar, start_milvus_lite
from tests.fakes.pdfs import write_pdf
from tests.support.processes import descendants, running
from tests.support.product import Product, child_pid, eventually, launch, manage, query, stop

pytestmark = pytest.mark.slow

CREATE_GURU = (
    "from backend.gurus.models import Guru; "
    "Guru.objects.get_or_create(slug='{slug}', defaults={{'name': 'Recovery', 'domain_knowledge': 'tasks'}})"
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recovery") / "data"


@pytest.fixture(scope="module")
def product(data_dir: Path) -> Iterator[Product]:
    running = launch(data_dir)
    yield running
    stop(running)


def _db(product: Product) -> sqlite3.Connection:
    return sqlite3.connect(product.data_dir / "openguru.sqlite3", timeout=30)


def _row(product: Product, sql: str, *params: object) -> tuple[Any, ...]:
    return query(product, sql, *params) or ()


def _source(product: Product, source_id: int) -> dict[str, Any]:
    names = ("status", "generation", "indexed_generation", "chunk_count", "progress_done", "progress_total",
             "error_message")
    row = _row(product, f"SELECT {', '.join(names)} FROM sources_datasource WHERE id = ?", source_id)
    return dict(zip(names, row, strict=True))


def _milvus(product: Product) -> tuple[MilvusClient, str]:
    uri = (product.data_dir / "run.env").read_text().strip().split("=", 1)[1]
    name = str(_row(product, "SELECT name FROM gurus_vectorcollection")[0])
    return MilvusClient(uri=uri), name


def _generations(product: Product, source_id: int) -> Counter[int]:
    client, name = _milvus(product)
    try:
        # Index generations only: the source's summary rows (generation -1) outlive index runs on purpose.
        rows = client.query(name, filter=f"source_id == {source_id} and generation >= 0", output_fields=["generation"],
                            limit=16000)
    finally:
        client.close()
    return Counter(int(row["generation"]) for row in rows)


def _is_indexed(product: Product, source_id: int) -> bool:
    return bool(_source(product, source_id)["status"] == "INDEXED")


def _worker_pid(product: Product) -> int | None:
    """The launcher's direct child running the Celery worker, if one is running."""
    return child_pid(product, b"worker")


def _kill_worker(pid: int) -> None:
    """SIGKILL the worker and its pool processes at once (an OOM kill, a power cut)."""
    for each in descendants(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(each, signal.SIGKILL)


def _under_way(product: Product, source_id: int) -> bool:
    source = _source(product, source_id)
    return bool(3 <= source["progress_done"] <= source["progress_total"] - 20)


def _add_pdf(product: Product, slug: str, pdf: Path) -> int:
    manage(product, "add_source", slug, str(pdf), "--no-wait")
    return int(_row(product, "SELECT max(id) FROM sources_datasource")[0])


def _long_pdf(path: Path, pages: int) -> Path:
    lines = [[f"Page {p} line {i}: the broker redelivers task {p * 100 + i} after a crash of its worker."
              for i in range(40)] for p in range(pages)]
    return write_pdf(path, lines)


def _web_answers(product: Product) -> bool:
    with urllib.request.urlopen(product.url + "/accounts/login/", timeout=10) as response:
        return bool(response.status == 200)


def test_a_sigkilled_worker_is_restarted_and_its_source_ends_indexed_without_orphans(product: Product) -> None:
    manage(product, "shell", "-c", CREATE_GURU.format(slug="recovery"))
    eventually(lambda: _row(product, "SELECT status FROM gurus_vectorcollection") == ("READY",), "collection", 120)
    source_id = _add_pdf(product, "recovery", _long_pdf(product.data_dir.parent / "long.pdf", pages=60))
    eventually(partial(_under_way, product, source_id), "indexing under way", 180)
    first_pid = _worker_pid(product)
    assert first_pid is not None
    _kill_worker(first_pid)
    assert _source(product, source_id)["status"] == "PROCESSING"

    eventually(lambda: _worker_pid(product) not in (None, first_pid), "the launcher restarting the worker", 30)
    assert re.search(r"worker exited with status -9; restarting it in 1 s", product.output.read_text())
    assert f"restarted worker (pid {_worker_pid(product)})" in product.output.read_text()
    assert product.process.poll() is None and _web_answers(product)  # web and Milvus kept running
    eventually(partial(_is_indexed, product, source_id), "the redelivered run", 240)
    # The redelivered run took the killed run's leases at once instead of waiting out their TTL.
    assert f"took over lock:source:{source_id}" in (product.data_dir / "logs" / "worker.log").read_text()

    source = _source(product, source_id)
    # Exactly the live generation's chunks, once each: nothing of the killed attempt is left over.
    assert _generations(product, source_id) == Counter({source["indexed_generation"]: source["chunk_count"]})

    # A source added after the restart is indexed by the new worker.
    small = write_pdf(product.data_dir.parent / "small.pdf", [["Acks late: a task is acknowledged after it ran."]])
    out = manage(product, "add_source", "recovery", str(small), "--timeout", "120")
    assert re.search(r"Indexed \d+ chunks from small.pdf", out)


def _insert_orphans(product: Product, source_id: int, generation: int, count: int) -> None:
    client, name = _milvus(product)
    rows = [{"id": f"orphan-{generation}-{i}", "vector": [0.05] * 384, "text": f"orphan chunk {i}",
             "source_id": source_id, "generation": generation, "kind": "PDF", "metadata": {}}
            for i in range(count)]
    try:
        client.insert(name, rows)
    finally:
        client.close()


def test_after_a_restart_runs_whose_task_was_lost_are_requeued_and_their_orphans_deleted(product: Product) -> None:
    slug = "recovery"
    manage(product, "shell", "-c", CREATE_GURU.format(slug=slug))
    eventually(lambda: _row(product, "SELECT status FROM gurus_vectorcollection") == ("READY",), "collection", 120)
    pdfs = [write_pdf(product.data_dir.parent / f"lost-{n}.pdf", [[f"Lost message number {n} is found again."]])
            for n in range(2)]
    ids = [_add_pdf(product, slug, pdf) for pdf in pdfs]
    for source_id in ids:
        eventually(partial(_is_indexed, product, source_id), "first index", 120)
    assert stop(product) == 0

    # What the old broker left after a crash: a queued run whose message was lost, and a claimed run
    # that died after writing part of its generation.
    pending, processing = ids
    with _db(product) as db:
        db.execute("UPDATE sources_datasource SET status='PENDING', generation=generation+1 WHERE id=?", (pending,))
        db.execute("UPDATE sources_datasource SET status='PROCESSING', generation=generation+1 WHERE id=?",
                   (processing,))
        if any(column[1] == "heartbeat_at" for column in db.execute("PRAGMA table_info(sources_datasource)")):
            # The run died long before this start (a stamp from minutes ago would do the same).
            db.execute("UPDATE sources_datasource SET heartbeat_at=NULL WHERE id=?", (processing,))
    dead_run = int(_source(product, processing)["generation"])
    sidecar = _start_sidecar_only(product)
    try:
        _insert_orphans(product, processing, dead_run, 50)
    finally:
        sidecar.stop()

    restarted = launch(product.data_dir)
    product.process, product.output, product.url = restarted.process, restarted.output, restarted.url
    for source_id in ids:
        eventually(partial(_is_indexed, product, source_id), "recovery at start", 120)
    source = _source(product, processing)
    live = Counter({source["indexed_generation"]: source["chunk_count"]})
    # The run retires the older generation right after it publishes the new one (never under a reader), so
    # "indexed" can be seen a moment before that delete lands.
    eventually(lambda: _generations(product, processing) == live, "older generations retired", 60)
    counts = _generations(product, processing)
    assert counts == live  # orphans gone


def _start_sidecar_only(product: Product) -> Sidecar:
    """The Milvus Lite sidecar alone on the product's data dir, with run.env naming it."""
    sidecar = start_milvus_lite(data_dir=product.data_dir / "milvus.db", log_dir=product.data_dir / "logs")
    (product.data_dir / "run.env").write_text(f"MILVUS_URI={sidecar.url}\n")
    return sidecar


def test_a_worker_killed_alone_takes_its_pool_and_beat_with_it(product: Product) -> None:
    # The OOM killer may pick the worker's main process only: its pool and embedded beat must not outlive it
    # (a second beat would schedule everything twice, an orphaned pool keeps its messages claimed).
    first_pid = _worker_pid(product)
    assert first_pid is not None
    eventually(lambda: len(descendants(first_pid)) >= 3, "the worker's pool and beat", 60)
    forked = descendants(first_pid)[1:]
    os.kill(first_pid, signal.SIGKILL)
    eventually(lambda: _worker_pid(product) not in (None, first_pid), "the launcher restarting the worker", 30)
    eventually(lambda: not [pid for pid in forked if running(pid)], "the old pool and beat gone", 30)


