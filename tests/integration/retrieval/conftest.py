"""A guru over one-page manuals of a command-line server, on real Milvus with local MiniLM embeddings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.answering.selectors import thresholds_for
from backend.gurus.models import Guru
from backend.retrieval.services import retrieve
from backend.sources.models import DataSource, SourceKind
from backend.sources.services import source_create
from tests.factories import GuruFactory
from tests.fakes.pdfs import pdf_bytes
from tests.support.gitrepo import init_repo

# One page per source, so each context is one passage. Near misses share all but the distinctive term: "exit
# code" without the number, other exit codes, "code 404", and the plain words of an identifier.
PAGES = {
    "Exit code 2": ["Exit code 2", "The command stops with exit code 2 when its arguments cannot be parsed:",
                    "an unknown option or a missing value. Run it with --help to list the options."],
    "Exit code 1": ["Exit code 1", "The command stops with exit code 1 when a job fails while it runs;",
                    "the log names the job that failed and its traceback."],
    "Exit code 3": ["Exit code 3", "The command stops with exit code 3 when the configuration file",
                    "cannot be read: check its path and its permissions."],
    "Exit codes in scripts": ["Exit codes in scripts", "Every command returns an exit code when it ends.",
                              "Check the exit code in your scripts before running the next step."],
    "Status codes": ["Status codes", "The API answers code 200 on success, code 404 for unknown paths",
                     "and code 429 when a client sends too many requests."],
    "Upload size": ["Upload size", "MAX_CONTENT_LENGTH sets the largest request body the server accepts, in",
                    "bytes. A larger upload is refused with status 413 before it is read."],
    "Content types": ["Content types", "The server reads the content type header to pick a parser; the",
                      "length of each field is limited by the form parser."],
    "Listening port": ["Listening port", "Pass --port to choose the port the server listens on; the",
                       "default is 8000. Use --host to choose the address."],
    "Monitoring": ["Monitoring workers", "The Monitoring page charts each worker's queue length, memory and",
                   "CPU, and the /metrics endpoint exports them for Prometheus."],
    "Bandwidth": ["Bandwidth limits", "Set upload_rate to cap how fast files are uploaded, in kilobytes per",
                  "second; download_rate caps downloads the same way. Zero means no limit."],
}


@pytest.fixture
def tool_guru(milvus: MilvusVectorStore, settings: SettingsWrapper,
              django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    settings.OPENGURU_EMBEDDER = {"BACKEND": "local-minilm"}
    cache.clear()
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="tool", name="Tool Guru", domain_knowledge="a command-line file server")
    for title, page in PAGES.items():
        upload = SimpleUploadedFile(f"{title}.pdf", pdf_bytes([page]), content_type="application/pdf")
        with django_capture_on_commit_callbacks(execute=True):
            source = source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title=title)
        source.refresh_from_db()
        assert source.status == "INDEXED", source.error_message
    return guru


def ranked(guru: Guru, query: str) -> list[tuple[str, float]]:
    """(source title, score) of the contexts an answer would get, best first, under the guru's thresholds."""
    rerank_threshold, _ = thresholds_for(guru)
    contexts = retrieve(guru=guru, query=query, rerank_threshold=rerank_threshold).contexts
    return [(c.title.split(" — ")[0], c.score) for c in contexts]


def trust_threshold(guru: Guru) -> float:
    return thresholds_for(guru)[1]


IndexRepo = Callable[[dict[str, str]], tuple[Guru, DataSource]]


@pytest.fixture
def index_repo(milvus: MilvusVectorStore, settings: SettingsWrapper, tmp_path: Path,
               django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> IndexRepo:
    """Index files as a Git source over file:// (real chunking as the indexer runs it) in a "quarry" guru."""

    def index(files: dict[str, str]) -> tuple[Guru, DataSource]:
        settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
        settings.OPENGURU_REPOS_DIR = str(tmp_path / "repos")
        repo = init_repo(tmp_path / "origin", files)
        with django_capture_on_commit_callbacks(execute=True):
            guru: Guru = GuruFactory(slug="quarry")
            source = source_create(guru=guru, kind=SourceKind.GITHUB_REPO, url=repo.as_uri(), allow_local=True)
        source.refresh_from_db()
        return guru, source

    return index
