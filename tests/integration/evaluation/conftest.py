"""Evaluation tests index real pages into real Milvus, like the ingestion tests (their fixtures, reused)."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from tests.fakes.site_server import Reply, SiteFake
from tests.integration.sources.conftest import collection, guru  # noqa: F401
from tests.integration.sources.source_support import index_source
from tests.support.summaries import page_html

PAGES = {
    "/uploads": ("Uploading files", [
        "Uploaded files are kept in memory until they reach the spooling size, then written to a temporary file.",
        "To reject uploads larger than a limit, set MAX_CONTENT_LENGTH to the largest size in bytes; a larger "
        "request body is answered with status 413 Request Entity Too Large."]),
    "/logging": ("Logging", [
        "The application logger is configured with dictConfig before the application object is created.",
        "In production, send the logs to a file handler or to the system journal and set the level to WARNING."]),
    "/templates": ("Templates", [
        "Templates are rendered with render_template, which looks for files in the templates folder.",
        "Autoescaping is enabled for files ending in .html, so values are escaped before they are inserted."]),
}

@pytest.fixture
def docs(guru: Guru, fake_site: SiteFake, settings: SettingsWrapper,  # noqa: F811 (the fixture above)
         django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]
    for path, (title, paragraphs) in PAGES.items():
        fake_site.overrides[path] = Reply(200, page_html(title, paragraphs).encode(), {"Content-Type": "text/html"})
        index_source(django_capture_on_commit_callbacks, guru, SourceKind.WEBSITE, f"{fake_site.base_url}{path}")
    return guru
