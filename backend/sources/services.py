"""Data source write paths: create, schedule (re-)indexing, delete. Indexing runs in sources.indexing."""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from backend.adapters import registry
from backend.core.errors import Conflict
from backend.core.tasks import enqueue_on_commit
from backend.gurus.models import Guru
from backend.gurus.services import guru_collection_rebuild
from backend.pipeline.youtube_urls import parse_youtube_url
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.summaries import summaries_queue
from backend.sources.validation import InvalidSource as InvalidSource  # re-exported: callers catch it from here
from backend.sources.validation import check_new_source

logger = logging.getLogger(__name__)

WEBSITE_MODES = ("page", "sitemap", "crawl")


def get_valid_filename_or_default(name: str, default: str = "document.pdf") -> str:
    from django.core.exceptions import SuspiciousFileOperation
    from django.utils.text import get_valid_filename

    try:
        cleaned = get_valid_filename(Path(name).name)
    except SuspiciousFileOperation:
        return default
    return cleaned if cleaned.lower().endswith(".pdf") else f"{cleaned or 'document'}.pdf"


def _validate(kind: str, url: str, options: dict[str, Any]) -> None:
    if kind == SourceKind.YOUTUBE:
        try:
            parse_youtube_url(url)
        except ValueError as exc:
            raise InvalidSource(str(exc)) from exc
    elif kind == SourceKind.WEBSITE:
        if not url.lower().startswith(("http://", "https://")):
            raise InvalidSource("A website source needs an http(s) URL.")
        if options.get("mode", "page") not in WEBSITE_MODES:
            raise InvalidSource(f"Website mode must be one of {', '.join(WEBSITE_MODES)}.")
    elif kind == SourceKind.GITHUB_REPO:
        if not url.lower().startswith(("https://", "http://", "git://", "file://", "/", "./", "../", "~")):
            raise InvalidSource("A repository source needs its clone URL, e.g. https://gitlab.com/group/project.git "
                                "(SSH remotes are not supported).")
    elif kind != SourceKind.PDF:
        raise InvalidSource(f"Unknown source kind {kind!r}.")


def _store_pdf(guru: Guru, upload: UploadedFile) -> tuple[str, str]:
    limit = settings.OPENGURU_MAX_PDF_BYTES
    if upload.size is None or upload.size > limit:
        raise InvalidSource(f"{upload.name} is larger than the {limit // (1024 * 1024)} MB limit for PDFs.")
    digest = hashlib.sha256()
    for part in upload.chunks():
        digest.update(part)
    # Storage drops unsafe characters; a name with none left would be refused, so give it one.
    name = get_valid_filename_or_default(upload.name or "")
    return digest.hexdigest(), name


def source_create(
    *, guru: Guru, kind: str, url: str = "", upload: UploadedFile | None = None, title: str = "",
    options: dict[str, Any] | None = None, private: bool = False, access_token: str = "", allow_local: bool = False,
) -> DataSource:
    """Add a source and index it after commit. Raises InvalidSource (it would fail) or Conflict (already added).

    allow_local: the caller is staff (or the server's terminal), who may add a repository on the server's disk.
    """
    options = dict(options or {})
    url = url.strip()
    _validate(kind, url, options)
    if kind != SourceKind.PDF:
        url = check_new_source(guru=guru, kind=kind, url=url, options=options, token=access_token,
                               allow_local=allow_local)
    source = DataSource(guru=guru, kind=kind, url=url, title=title, options=options, private=private,
                        access_token=access_token)
    if kind == SourceKind.PDF:
        if upload is None:
            raise InvalidSource("A PDF source needs an uploaded file.")
        source.content_hash, name = _store_pdf(guru, upload)
        source.title = title or name
        source.file.save(name, upload, save=False)
    try:
        with transaction.atomic():
            source.save()
    except IntegrityError as exc:
        if source.file:
            source.file.delete(save=False)
        raise Conflict("This source was already added to the guru.") from exc
    source_schedule_index(source=source)
    return source


def source_schedule_index(*, source: DataSource) -> int:
    """Start a new index run (generation) after commit; an older run still queued becomes a no-op."""
    # heartbeat_at doubles as "queued at": recovery re-queues a run that never started (lost message).
    DataSource.objects.filter(pk=source.pk).update(
        generation=F("generation") + 1, status=SourceStatus.PENDING, progress_done=0, progress_total=0,
        heartbeat_at=timezone.now(), recoveries=0,
    )
    source.refresh_from_db(fields=["generation", "status"])
    enqueue_on_commit("sources.index", source_id=source.pk, run=source.generation)
    return source.generation


def source_mark_crashed(*, source_id: int, run: int, exc: BaseException) -> None:
    """An index run ended in an unexpected error: FAILED with a sentence, details in the worker log."""
    logger.exception("indexing source %s run %s crashed", source_id, run)
    DataSource.objects.filter(pk=source_id, generation=run).update(
        status=SourceStatus.FAILED,
        error_message=f"Indexing stopped on an unexpected error ({type(exc).__name__}); the previous index "
                      "keeps answering. Details are in the worker log.",
    )


def source_reindex_guru(*, guru: Guru) -> int:
    """Re-index every source of a guru; returns how many were scheduled."""
    sources = list(DataSource.objects.filter(guru=guru))
    for source in sources:
        source_schedule_index(source=source)
    return len(sources)


def source_mark_for_reindex(*, guru_id: int, reason: str) -> int:
    """Put every source of a guru back to PENDING with a note and schedule it; returns how many."""
    sources = list(DataSource.objects.filter(guru_id=guru_id))
    DataSource.objects.filter(guru_id=guru_id).update(
        error_message=reason, chunk_count=0, indexed_generation=None
    )
    for source in sources:
        source.github_files.update(in_index=False, chunk_count=0)
        source_schedule_index(source=source)
    return len(sources)


def source_reembed_guru(*, guru_id: int) -> int:
    """Rebuild the guru's collection for the configured embedder and re-index every source; returns how many.

    The caller holds the guru's collection lock (gurus.services.collection_lock_name).
    """
    if not guru_collection_rebuild(guru_id=guru_id):
        return 0
    return source_mark_for_reindex(guru_id=guru_id, reason="Waiting to be re-embedded for the new embedder.")


def source_delete(*, source: DataSource) -> None:
    """Delete a source; after commit a task removes its vectors, stored file and repository checkout."""
    source_id, guru_id, file_name = source.pk, source.guru_id, source.file.name or ""
    source.delete()  # GithubFile rows cascade
    enqueue_on_commit("sources.cleanup", source_id=source_id, guru_id=guru_id, file_name=file_name)
    summaries_queue(guru_id=guru_id, source_id=None)  # the guru's summary no longer covers it
    enqueue_on_commit("sources.graph", guru_id=guru_id)  # its documents' rows went with it; the state is stale


def source_cleanup(*, source_id: int, guru_id: int, file_name: str) -> None:
    """Remove what a deleted source left outside the database. Idempotent."""
    from django.core.files.storage import default_storage

    from backend.gurus.models import VectorCollection

    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    if record is not None:
        registry.vector_store().delete_where(record.name, source_id=source_id)
    if file_name:
        default_storage.delete(file_name)
    shutil.rmtree(Path(settings.OPENGURU_REPOS_DIR) / str(int(source_id)), ignore_errors=True)


def source_schedule_due() -> int:
    """Beat's fan-out: schedule Git repository re-syncs and website re-crawls whose interval has passed."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    due: list[DataSource] = []
    for kind, hours in ((SourceKind.GITHUB_REPO, settings.OPENGURU_GITHUB_RESYNC_HOURS),
                        (SourceKind.WEBSITE, settings.OPENGURU_WEBSITE_RECRAWL_HOURS)):
        if hours > 0:
            due += DataSource.objects.filter(
                kind=kind, status__in=[SourceStatus.INDEXED, SourceStatus.FAILED],
                last_indexed_at__lt=now - timedelta(hours=hours),
            )
    for source in due:
        source_schedule_index(source=source)
    return len(due)
