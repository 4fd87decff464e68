"""Add a source and run its indexing at once (the on-commit task runs eagerly), as the ingestion tests need."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.gurus.models import Guru
from backend.sources.models import DataSource
from backend.sources.services import source_create


def index_source(capture: DjangoCaptureOnCommitCallbacks, guru: Guru, kind: str, url: str = "",
                 upload: SimpleUploadedFile | None = None, *, allow_local: bool = True,
                 **options: object) -> DataSource:
    """The source after its first run, read back from the database (added as staff: local repositories allowed)."""
    with capture(execute=True):
        source = source_create(guru=guru, kind=kind, url=url, upload=upload, options=options,
                               allow_local=allow_local)
    source.refresh_from_db()
    return source
