"""The source graph through the real pipeline: a repository indexed on real Milvus gets its documents and their
links, imports and copies as rows; retrieval follows a link one hop when the guru allows it; rows follow re-syncs."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.retrieval import services as retrieval
from backend.sources.graph import graph_recover, graph_signature
from backend.sources.models import DataSource, DocumentEdge, DocumentNode, SourceGraphState, SourceKind
from backend.sources.services import source_create, source_delete, source_schedule_index
from tests.support.gitrepo import commit_all, init_repo, write_files

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

RUNBOOK = "Run `keyctl roll --grace 24h` to replace the current key; the old one keeps verifying for a day.\n"
FILES = {
    "docs/flamingo.md": "# Flamingo service\n\nThe flamingo service signs every session token it issues.\n"
                        "How its signing keys are rotated is in the [operations runbook](ops/runbook.md#keys).\n",
    "docs/ops/runbook.md": f"# Runbook\n\n## Keys\n\n{RUNBOOK}",
    "docs/heron.md": "# Heron queue\n\nThe heron queue delivers messages in order. See the "
                     "[flamingo service](https://example.org/elsewhere) for tokens and the [runbook][keys].\n\n"
                     "[keys]: ops/runbook.md\n",
    "pkg/app.py": "from pkg.store import save\nfrom . import util\n\n\ndef run():\n    return save(util.x)\n",
    "pkg/store.py": "def save(value):\n    return value\n",
    "pkg/util.py": "x = 1\n",
}


@pytest.fixture
def repo(tmp_path: Path, settings: SettingsWrapper) -> Path:
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
    return init_repo(tmp_path / "origin", FILES)


def _index(guru: Guru, repo: Path, capture: DjangoCaptureOnCommitCallbacks) -> DataSource:
    with capture(execute=True):
        source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=repo.as_uri(), allow_local=True)
    source.refresh_from_db()
    assert source.status == "INDEXED", source.error_message
    return source


def _edges(guru: Guru) -> set[tuple[str, str, str]]:
    return {(e.origin.key, e.kind, e.target.key)
            for e in DocumentEdge.objects.filter(guru=guru).select_related("origin", "target")}


def test_indexing_builds_the_graph_and_a_resync_or_delete_keeps_it_current(
    guru: Guru, repo: Path, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = _index(guru, repo, django_capture_on_commit_callbacks)
    # The heron page's reference-style link counts though the chunks drop its definition; its external one not.
    assert _edges(guru) == {("docs/flamingo.md", "link", "docs/ops/runbook.md"),
                            ("docs/heron.md", "link", "docs/ops/runbook.md"),
                            ("pkg/app.py", "import", "pkg/store.py"), ("pkg/app.py", "import", "pkg/util.py")}
    runbook = DocumentNode.objects.get(guru=guru, key="docs/ops/runbook.md")
    assert runbook.breadcrumbs == ["docs", "ops"] and runbook.chunk_ids and runbook.source_id == source.pk
    state = SourceGraphState.objects.get(guru=guru)
    assert (state.documents, state.edges, state.signature) == (6, 4, graph_signature(guru.pk))
    assert graph_recover() == 0, "a current graph is not rebuilt"

    heron = "# Heron queue\n\nTokens come from the [flamingo service](../docs/flamingo.md).\n"
    write_files(repo, {"docs/heron.md": heron,
                       "docs/copy.md": f"# Runbook\n\n## Keys\n\n{RUNBOOK * 4}",
                       "docs/ops/runbook.md": f"# Runbook\n\n## Keys\n\n{RUNBOOK * 4}"})
    commit_all(repo)
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    edges = _edges(guru)
    assert ("docs/heron.md", "link", "docs/flamingo.md") in edges
    assert ("docs/copy.md", "duplicate", "docs/ops/runbook.md") in edges
    assert SourceGraphState.objects.get(guru=guru).signature == graph_signature(guru.pk)

    with django_capture_on_commit_callbacks(execute=True):
        source_delete(source=source)
    assert not DocumentNode.objects.filter(guru=guru).exists() and not _edges(guru)


def test_retrieval_reaches_a_linked_page_the_search_did_not_find_only_when_the_guru_allows_it(
    guru: Guru, repo: Path, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    _index(guru, repo, django_capture_on_commit_callbacks)
    # The search keeps one candidate: the page that names the service. The runbook that answers never says it.
    monkeypatch.setattr(retrieval, "CANDIDATES", 1)
    question = "How are the flamingo service's signing keys rotated?"
    found = retrieval.retrieve(guru=guru, query=question, rerank_threshold=0.0)
    contexts = found.contexts
    by_title = {c.title: c for c in contexts}
    titles = [c.title for c in contexts]
    assert found.links == {(titles.index("docs/flamingo.md"), titles.index("docs/ops/runbook.md"))}
    assert set(by_title) == {"docs/flamingo.md", "docs/ops/runbook.md"}
    assert by_title["docs/ops/runbook.md"].linked_from == "docs/flamingo.md"
    assert "keyctl roll" in by_title["docs/ops/runbook.md"].text
    assert by_title["docs/flamingo.md"].linked_from == ""

    Guru.objects.filter(pk=guru.pk).update(source_graph=False)
    guru.refresh_from_db()
    found = retrieval.retrieve(guru=guru, query=question, rerank_threshold=0.0)
    assert [c.title for c in found.contexts] == ["docs/flamingo.md"] and found.links == frozenset()


def test_one_hop_is_bounded_starts_from_the_best_documents_and_skips_what_was_found(guru: Guru) -> None:
    from backend.retrieval.neighbours import MAX_NEIGHBOURS, _neighbour_nodes
    from backend.sources.models import EdgeKind
    from tests.factories import DataSourceFactory

    source = DataSourceFactory(guru=guru)
    nodes = {key: DocumentNode.objects.create(guru=guru, source=source, key=key, title=key, chunk_ids=[f"c-{key}"])
             for key in ["best", "second", *(f"page{i}" for i in range(12))]}
    for i in range(12):  # the best document links to twelve pages, the second is linked from one of them
        DocumentEdge.objects.create(guru=guru, origin=nodes["best"], target=nodes[f"page{i}"], kind=EdgeKind.LINK)
    DocumentEdge.objects.create(guru=guru, origin=nodes["page11"], target=nodes["second"], kind=EdgeKind.LINK)
    DocumentEdge.objects.create(guru=guru, origin=nodes["best"], target=nodes["second"], kind=EdgeKind.DUPLICATE)
    found = _neighbour_nodes(guru.pk, [(source.pk, "best"), (source.pk, "second")], {(source.pk, "page0")})
    assert len(found) == MAX_NEIGHBOURS
    assert all(title == "best" for _, title in found), "the best document's neighbours come first"
    assert "page0" not in [n.key for n, _ in found], "a document the search found is not read again"
    assert "second" not in [n.key for n, _ in found], "a seed is never its own neighbour; duplicates are not hops"
    assert _neighbour_nodes(guru.pk, [], set()) == []
