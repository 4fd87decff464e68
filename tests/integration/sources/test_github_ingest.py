"""A git repository indexes through the real reader, re-syncs only what changed, and deletes cleanly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.gurus.models import Guru
from backend.sources.models import DataSource, GithubFile, SourceKind, SourceStatus
from backend.sources.services import source_create, source_delete, source_schedule_index
from tests.support.gitrepo import commit_all, git, init_repo, write_files

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

FILES = {
    "README.md": "# Pipeline\n\nThe pipeline ingests repositories. Zebras are never mentioned elsewhere.\n",
    "src/app.py": "def handle(event):\n    \"\"\"Route an event to its queue.\"\"\"\n    return event['queue']\n",
    "docs/guide.md": "# Guide\n\nThe flamingo configuration lives in guide.md only.\n",
    "node_modules/x/index.js": "module.exports = 1;\n",
}


def _ids(milvus: MilvusVectorStore, collection: str, source_id: int) -> dict[str, set[str]]:
    hits = milvus.search_dense(collection, registry.embedder().embed_query("pipeline"), top_k=100,
                               source_ids=[source_id])
    found: dict[str, set[str]] = {}
    for hit in hits:
        found.setdefault(hit.metadata["doc_key"], set()).add(hit.chunk_id)
    return found


@pytest.fixture
def repo(tmp_path: Path, settings: SettingsWrapper) -> Path:
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
    return init_repo(tmp_path / "origin", FILES, branch="trunk")


def test_index_resync_and_delete(
    guru: Guru, collection: str, repo: Path, milvus: MilvusVectorStore, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=repo.as_uri(), allow_local=True)
    source.refresh_from_db()
    assert (source.status, source.progress_done, source.progress_total) == (SourceStatus.INDEXED, 3, 3)
    assert set(GithubFile.objects.values_list("path", flat=True)) == {"README.md", "src/app.py", "docs/guide.md"}
    before = _ids(milvus, collection, source.pk)
    assert set(before) == {"README.md", "src/app.py", "docs/guide.md"}
    assert source.chunk_count == sum(len(ids) for ids in before.values())
    code_hit = milvus.search_dense(collection, registry.embedder().embed_query("route an event"), top_k=1)[0]
    assert code_hit.metadata["line_start"] == 1 and code_hit.metadata["doc_key"] == "src/app.py"

    write_files(repo, {"src/app.py": "def handle(event):\n    return event['priority_queue']\n",
                       "src/new.py": "NEW = 'added later'\n"})
    git(repo, "rm", "-q", "docs/guide.md")
    commit_all(repo)
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert (source.status, source.progress_total) == (SourceStatus.INDEXED, 3)  # 2 changed + 1 removed
    after = _ids(milvus, collection, source.pk)
    assert set(after) == {"README.md", "src/app.py", "src/new.py"}
    assert after["README.md"] == before["README.md"]  # untouched file: same chunks, not rewritten
    assert after["src/app.py"].isdisjoint(before["src/app.py"])
    assert not GithubFile.objects.filter(path="docs/guide.md").exists()

    source_id = source.pk
    workdir = Path(settings.OPENGURU_REPOS_DIR) / str(source_id)
    assert workdir.exists()
    with django_capture_on_commit_callbacks(execute=True):
        source_delete(source=source)
    assert _ids(milvus, collection, source_id) == {}
    assert not GithubFile.objects.exists() and not DataSource.objects.exists() and not workdir.exists()


def test_a_repository_that_disappears_after_it_was_added_fails_with_a_clear_message(
    guru: Guru, repo: Path, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=repo.as_uri(), allow_local=True)
    shutil.rmtree(repo)  # refused at submit when missing (test_git_hosts); here it goes away later
    with django_capture_on_commit_callbacks(execute=True):
        source_schedule_index(source=source)
    source.refresh_from_db()
    assert source.status == SourceStatus.FAILED
    assert "repository not found" in source.error_message
