"""Add a source and run its indexing at once (the on-commit task runs eagerly), as the ingestion tests need."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.gurus.models import Guru
from backend.sources.models import DataSource
from backend.sources.services import source_create


def index_source(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, kind: str, url: str = "",
                 upload: SimpleUploadedFile | None = None, **options: object) -> DataSource:
    """The source after its first run, read back from the database."""
    with capture(execute=True):
        source = source_create(guru=guru, kind=kind, url=url, upload=upload, options=options)
    source.refresh_from_db()
    return source
