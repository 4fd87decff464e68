"""Operations on real processes: the embedded default moves to the production profile with export/import, and
a production install is backed up (pg_dump + vectors + media), wiped, restored and answers the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.operations_support import ADMIN_PASSWORD, Install, ask, create_database, drop_collections, drop_database
from tests.fakes.pdfs import write_pdf
from tests.support.product import Browser, create_guru, eventually, launch, manage, stop, summaries_settled
from tests.support.sidecars import postgres_bin_dir

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's servers"),
]

PAGES = [
    ["Retrying tasks", "Call self.retry() inside a bound task to retry it after a failure.",
     "The countdown argument sets how many seconds to wait before the retry runs."],
    ["Rate limits", "The rate_limit option throttles how often a task may run per minute.",
     "Workers enforce rate limits per worker process, not across the whole cluster."],
    ["Visibility timeout", "The visibility timeout is how long the broker waits for an acknowledgement.",
     "After the visibility timeout, an unacknowledged message is redelivered to another worker."],
]
Q1, Q2, Q3 = "How do I retry a task?", "How do rate limits work?", "What does the visibility timeout do?"
KEEPER_PASSWORD = "keepers-embedded-password"


@dataclass
class Embedded:
    archive: Path
    answers: dict[str, dict[str, Any]]
    vector_rows: int
    """The guru's rows in the vector store: its chunks and its summary nodes."""


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedded]:
    """An embedded install (the launcher) that a user filled through the dashboard and the CLI, exported."""
    work = tmp_path_factory.mktemp("embedded")
    product = launch(work / "data")
    try:
        create_guru(product, "celery", "Celery Guru", "Celery task queue")
        out = manage(product, "add_source", "celery", str(write_pdf(work / "manual.pdf", PAGES)))
        chunks = int(re.search(r"Indexed (\d+) chunks", out).group(1))  # type: ignore[union-attr]
        # The worker summarises the manual after indexing it; the archive and the answers include its summary.
        eventually(lambda: summaries_settled(product), "the manual's summary")
        manage(product, "shell", "-c", "from django.contrib.auth.models import User; "
               f"User.objects.create_user('keeper', password='{KEEPER_PASSWORD}')")
        answers = {Q1: ask(product.url, "celery", Q1)}
        archive = work / "openguru.zip"
        out = manage(product, "export_data", str(archive))
        nodes = int(re.search(r"sources\.summarization\s+(\d+)", out).group(1))  # type: ignore[union-attr]
        assert nodes >= 1 and "Exported to" in out and re.search(rf"vectors of celery\s+{chunks + nodes}\s", out), out
        # Asked after the export: the target never saw these answers, it has to find them in the vectors.
        answers |= {q: ask(product.url, "celery", q) for q in (Q2, Q3)}
    finally:
        stop(product)
    yield Embedded(archive, answers, chunks + nodes)


def _logged_in(base_url: str, username: str, password: str) -> bool:
    page = Browser(base_url).submit("/accounts/login/", {"username": username, "password": password})
    return 'name="password"' not in page


def test_the_embedded_install_moves_to_production(embedded: Embedded, tmp_path: Path) -> None:
    target = Install.create(tmp_path / "production", redis_db=11)
    try:
        out = target.manage("import_data", str(embedded.archive)).stdout
        assert "kept as they are here (matched by name): admin" in out
        assert re.search(r"sources\.datasource\s+1 of 1", out) and re.search(r"answering\.question\s+1 of 1", out)
        assert re.search(rf"vectors of celery\s+{embedded.vector_rows}\s+imported", out)
        assert "Import complete; every count matches the archive." in out
        target.start()
        assert ask(target.url, "celery", Q1) == embedded.answers[Q1]
        assert ask(target.url, "celery", Q2) == embedded.answers[Q2]  # retrieved from the imported vectors
        collections = target.manage("collections").stdout
        assert re.search(rf"celery\s+\S+celery\s+384\s+{embedded.vector_rows}\s+ok", collections)
        assert _logged_in(target.url, "keeper", KEEPER_PASSWORD)  # moved with the password it had
        assert _logged_in(target.url, "admin", ADMIN_PASSWORD)  # this install's admin is left as it was
    finally:
        target.destroy()


def test_backup_wipe_restore_answers_the_same(embedded: Embedded, tmp_path: Path) -> None:
    install = Install.create(tmp_path / "production", redis_db=12)
    database, data = install.env["DATABASE_URL"], Path(install.env["OPENGURU_DATA_DIR"])
    backup = tmp_path / "backup"
    backup.mkdir()
    try:
        install.manage("import_data", str(embedded.archive))
        install.start()
        first = ask(install.url, "celery", Q1)

        pg_bin = postgres_bin_dir()  # the commands docs/operations.md gives, against this install
        subprocess.run([pg_bin / "pg_dump", "--format=custom", "--file", backup / "db.dump", database], check=True)
        out = install.manage("export_data", "--vectors-only", str(backup / "vectors.zip")).stdout
        assert re.search(rf"vectors of celery\s+{embedded.vector_rows}", out)
        subprocess.run(["tar", "-czf", backup / "media.tgz", "-C", data, "media"], check=True)
        # The whole-install archive reads PostgreSQL in one repeatable-read snapshot; it holds what the dump holds.
        out = install.manage("export_data", str(backup / "everything.zip")).stdout
        assert re.search(r"answering\.question\s+2\b", out) and re.search(r"sources\.datasource\s+1\b", out), out

        install.stop()  # the disaster: database, collections and files gone
        drop_database(database)
        assert drop_collections(install.env["MILVUS_URI"], install.env["OPENGURU_COLLECTION_PREFIX"])
        shutil.rmtree(data / "media")

        create_database(database, urllib.parse.urlsplit(database).path.lstrip("/"))
        subprocess.run([pg_bin / "pg_restore", "--no-owner", "--dbname", database, backup / "db.dump"], check=True)
        subprocess.run(["tar", "-xzf", backup / "media.tgz", "-C", data], check=True)
        out = install.manage("import_data", "--vectors-only", str(backup / "vectors.zip")).stdout
        assert re.search(rf"vectors of celery\s+{embedded.vector_rows}\s+imported", out) and "queued" not in out
        install.start()

        assert ask(install.url, "celery", Q3) == embedded.answers[Q3]  # never asked here: found in restored vectors
        assert ask(install.url, "celery", Q1) == first
        link = next(r["link"] for r in first["references"] if r.get("link", "").startswith("/"))
        assert _fetch(install.url + link).startswith(b"%PDF")  # the uploaded file came back with the media
    finally:
        install.destroy()


def _fetch(url: str) -> bytes:
    import urllib.request

    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=30) as response:
        return bytes(response.read())
