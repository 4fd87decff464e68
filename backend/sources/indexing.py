"""One index run of a source: claim it, load, chunk, embed, write, retire the old generation."""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from backend.adapters import registry
from backend.core.selectors import settings_get
from backend.gurus.models import CollectionStatus, VectorCollection
from backend.pipeline.chunking import ChunkingConfig, default_chunking
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.types import SourceKind
from backend.sources.graph import graph_queue
from backend.sources.limits import source_budget
from backend.sources.models import DataSource, SourceStatus
from backend.sources.pages import pages_replace
from backend.sources.progress import INCREMENTAL_GENERATION, Progress
from backend.sources.recovery import drop_abandoned_generations
from backend.sources.summaries import summaries_queue
from backend.sources.term_stats import term_stats_queue
from backend.sources.writer import ChunkWriter, WriteResult

logger = logging.getLogger(__name__)


def chunking_config() -> ChunkingConfig:
    """Settings' sizes when set, else the embedder's window; never larger than the window."""
    window = registry.embedder().max_input_tokens
    default = default_chunking(embedder_max_tokens=window)
    stored = settings_get()
    size = min(stored.chunk_size or default.max_tokens, default.max_tokens)
    overlap = stored.chunk_overlap if stored.chunk_overlap is not None else size * 12 // 100
    return ChunkingConfig(max_tokens=size, overlap_tokens=min(overlap, size // 2 - 1),
                          min_chars=stored.chunk_min_length)


def _claim(source_id: int, run: int) -> bool:
    claimed = DataSource.objects.filter(
        pk=source_id, generation=run, status__in=[SourceStatus.PENDING, SourceStatus.PROCESSING]
    ).update(status=SourceStatus.PROCESSING, error_message="", indexing_started_at=timezone.now())
    return claimed == 1


def _collection(guru_id: int) -> str:
    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    if record is None or record.status != CollectionStatus.READY:
        # The guru's collection is still being created (or failed): wait for it rather than fail.
        raise TransientServiceError("The guru's vector collection is not ready yet.")
    return record.name


def _writer(source: DataSource, collection: str, generation: int) -> ChunkWriter:
    return ChunkWriter(store=registry.vector_store(), embedder=registry.embedder(), collection=collection,
                       source_id=source.pk, generation=generation, kind=SourceKind(source.kind),
                       config=chunking_config(), budget=source_budget(source))


def source_index(*, source_id: int, run: int) -> None:
    """Index the source for run `run`; a superseded or deleted run is a no-op.

    Permanent failures mark the source FAILED (its previous chunks keep answering); transient ones
    propagate for the task to retry. Re-running the same run rewrites the same chunk ids.
    """
    if not _claim(source_id, run):
        logger.info("source %s run %s superseded or deleted; skipping", source_id, run)
        return
    source = DataSource.objects.select_related("guru").get(pk=source_id)
    progress = Progress(source_id, run)
    try:
        collection = _collection(source.guru_id)
        if source.kind == SourceKind.GITHUB_REPO:
            from backend.sources.github_sync import github_sync

            generation = INCREMENTAL_GENERATION
            result = github_sync(source, _writer(source, collection, generation), progress)
        else:
            from backend.sources.loaders import load_and_write

            generation = run
            # Chunks of runs that died or were superseded (and of an earlier attempt of this one)
            # never answered; this run holds the source's lock, so none of them is being written.
            drop_abandoned_generations(source_id=source_id, collection=collection,
                                       indexed=source.indexed_generation, upto=run)
            result = load_and_write(source, _writer(source, collection, generation), progress)
    except PermanentServiceError as exc:
        DataSource.objects.filter(pk=source_id, generation=run).update(
            status=SourceStatus.FAILED, error_message=str(exc)[:2000]
        )
        if source.kind != SourceKind.GITHUB_REPO and VectorCollection.objects.filter(guru_id=source.guru_id).exists():
            # The half-written new generation never answered; the previous one keeps answering.
            registry.vector_store().delete_where(_collection(source.guru_id), source_id=source_id, generation=run)
        logger.warning("source %s failed permanently: %s", source_id, exc)
        return
    except TransientServiceError as exc:
        DataSource.objects.filter(pk=source_id, generation=run).update(error_message=f"Retrying: {exc}"[:2000])
        raise
    published = _publish(source, run, generation, result)
    if published:
        summaries_queue(guru_id=source.guru_id, source_id=source_id)
        term_stats_queue(source_id=source_id)
        graph_queue(guru_id=source.guru_id)
    # Retire older chunks only once this generation is the live one: a run superseded meanwhile
    # leaves everything to the newer run, so the live generation is never deleted under a reader.
    if published and generation != INCREMENTAL_GENERATION:
        registry.vector_store().delete_where(collection, source_id=source_id, generation_lt=generation)
    elif not published and generation != INCREMENTAL_GENERATION:
        registry.vector_store().delete_where(collection, source_id=source_id, generation=generation)


def _title(source: DataSource, result: WriteResult) -> str:
    """The maintainer's title, else the run's; a sitemap/crawl named after its first page gets its site's name."""
    if result.pages and source.title and source.title == result.first_page_title:
        return result.title  # earlier versions titled multi-page sources after their first page
    return source.title or result.title


def _publish(source: DataSource, run: int, generation: int, result: WriteResult) -> bool:
    """Make this run's generation the live one, with its page rows, unless a newer run superseded it."""
    now = timezone.now()
    with transaction.atomic():
        published = DataSource.objects.filter(pk=source.pk, generation=run).update(
            status=SourceStatus.INDEXED, indexed_generation=generation, chunk_count=result.chunks,
            error_message=result.note, title=_title(source, result)[:500], last_indexed_at=now,
            reindex_count=F("reindex_count") + 1,
        )
        if published and result.pages:
            pages_replace(source_id=source.pk, pages=result.pages, when=now)
    return bool(published)
