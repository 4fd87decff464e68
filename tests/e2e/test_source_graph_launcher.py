"""The source graph through `./openguru start`: the worker builds it after a repository is indexed, the source
page lists the connections, a re-sync that adds a link updates it, and a restart keeps it without a rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitrepo import commit_all, init_repo, write_files
from tests.support.product import Product, create_guru, eventually, launch, manage, query, stop

pytestmark = pytest.mark.slow

SLUG = "graph-guru"
FILES = {
    "docs/index.rst": "Birds\n=====\n\n.. toctree::\n\n   flamingo\n   ops/runbook\n",
    "docs/flamingo.rst": "Flamingo service\n================\n\nThe flamingo service signs session tokens. Its keys "
                         "are rotated as the :doc:`ops/runbook` says.\n",
    "docs/ops/runbook.rst": "Runbook\n=======\n\nRun ``keyctl roll --grace 24h`` to replace the current key.\n",
    "docs/heron.md": "# Heron queue\n\nThe heron queue delivers messages in order.\n",
}


def _state(product: Product) -> tuple[int, int, str] | None:
    row = query(product, "SELECT s.documents, s.edges, s.updated_at FROM sources_sourcegraphstate s "
                         "JOIN gurus_guru g ON g.id = s.guru_id WHERE g.slug = ?", SLUG)
    return None if row is None else (int(row[0]), int(row[1]), str(row[2]))


def _edges(product: Product) -> int:
    row = query(product, "SELECT COUNT(*) FROM sources_documentedge e JOIN gurus_guru g ON g.id = e.guru_id "
                         "WHERE g.slug = ?", SLUG)
    return 0 if row is None else int(row[0])


def test_the_worker_builds_the_graph_the_page_shows_it_and_it_outlives_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = init_repo(tmp_path / "birds", FILES)
    data_dir = tmp_path / "var"
    env = {"OPENGURU_WEB_RATE_LIMIT": "0", "OPENGURU_GIT_ALLOW_FILE_URLS": "1"}
    monkeypatch.setenv("OPENGURU_GIT_ALLOW_FILE_URLS", "1")  # for `manage add_source`, run as the user runs it
    product = launch(data_dir, env=env)
    try:
        browser = create_guru(product, SLUG, "Graph Guru", "the birds services")
        manage(product, "add_source", SLUG, repo.as_uri(), "--kind", "GITHUB_REPO")
        # index -> flamingo, toctree -> flamingo and runbook, flamingo -> runbook
        eventually(lambda: (_state(product) or (0, 0, ""))[:2] == (4, 3), "the graph built by the worker", 120)
        source = query(product, "SELECT id FROM sources_datasource")
        assert source is not None
        page = browser.get(f"/dashboard/g/{SLUG}/sources/{source[0]}/")
        assert "data-connections" in page and "links to" in page and "linked from" in page
        assert 'data-neighbour="docs/ops/runbook.rst"' in page

        write_files(repo, {"docs/heron.md": "# Heron queue\n\nTokens come from the [flamingo](flamingo.rst).\n"})
        commit_all(repo)
        browser.submit(f"/dashboard/g/{SLUG}/sources/", {"action": "reindex", "ids": str(source[0])},
                       action=f"/dashboard/g/{SLUG}/sources/actions/")
        eventually(lambda: _edges(product) == 4, "the link the re-sync added", 120)
        built = _state(product)
    finally:
        assert stop(product) == 0
    product = launch(data_dir, env=env)
    try:
        # A worker start queues a rebuild only for a graph older than its sources: this one is current.
        eventually(lambda: query(product, "SELECT COUNT(*) FROM sources_datasource WHERE status = 'INDEXED'")
                   == (1,), "the worker's start-up checks")
        assert _state(product) == built and _edges(product) == 4
    finally:
        assert stop(product) == 0
