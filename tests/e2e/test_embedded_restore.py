"""The embedded default's backup, as docs/operations.md tells a user: `./openguru manage export_data` beside a
running instance, then `./openguru manage import_data` into an empty data dir (one command, no migrate first),
and the restored instance answers the same."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.operations_support import ask
from tests.fakes.pdfs import write_pdf
from tests.support.product import REPO, create_guru, environment, launch, manage, stop

pytestmark = [pytest.mark.slow]

PAGES = [["Retrying tasks", "Call self.retry() inside a bound task to retry it after a failure.",
          "The countdown argument sets how many seconds to wait before the retry runs."]]
QUESTION = "How do I retry a task?"


def test_a_backup_restores_into_an_empty_data_dir_in_one_command(tmp_path: Path) -> None:
    product = launch(tmp_path / "data")
    try:
        create_guru(product, "celery", "Celery Guru", "Celery task queue")
        manage(product, "add_source", "celery", str(write_pdf(tmp_path / "manual.pdf", PAGES)))
        before = ask(product.url, "celery", QUESTION)
        archive = tmp_path / "backup.zip"
        assert "Exported to" in manage(product, "export_data", str(archive))
    finally:
        stop(product)

    restored = tmp_path / "restored"  # nothing in it: no database, no vectors
    result = subprocess.run([str(REPO / "openguru"), "manage", "import_data", str(archive)], cwd=REPO,
                            env=environment(restored), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "The database was new: migrated it first." in result.stdout
    assert re.search(r"vectors of celery\s+\d+\s+imported", result.stdout), result.stdout

    again = launch(restored)
    try:
        assert "An administrator already exists: admin" in again.output.read_text()
        after = ask(again.url, "celery", QUESTION)
        assert [r["title"] for r in after["references"]] == [r["title"] for r in before["references"]]
        assert "self.retry()" in after["text"]
    finally:
        stop(again)
