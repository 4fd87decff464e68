"""Vectors in an archive: read back from the vector store with their fields, written back without re-embedding.

When the archive's embedder differs from this install's (another model or dimension), its vectors would be
compared with queries of another space, so they are not written: the guru's collection is rebuilt for this
embedder and its sources are queued for re-indexing, as `manage.py reembed` does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from backend.adapters import registry
from backend.core.locks import cache_lock
from backend.gurus.models import Guru, VectorCollection
from backend.gurus.services import collection_lock_name, collection_name_for, guru_collection_sync
from backend.portability.archive import ArchiveError, ArchiveReader, ArchiveWriter, chunk_row, dumps, row_chunk
from backend.sources.models import DataSource
from backend.sources.services import source_reembed_guru, source_schedule_index

SCAN_BATCH = 256  # measured: 1,000-row pages let the export grow 26 MB over 15k chunks, 256 stay flat
WRITE_BATCH = 500
LOCK_WAIT_S = 120
LOCK_TTL_S = 3600  # writing a large collection takes minutes; the lock must outlive it


@dataclass
class VectorResult:
    """What happened to one guru's vectors."""

    slug: str
    collection: str
    chunks: int
    action: str  # "imported" | "re-indexing" | "empty"
    reindexed_sources: list[int]


def export_vectors(writer: ArchiveWriter) -> list[dict[str, Any]]:
    """One member per guru with a collection: every chunk, every generation, with its stored vector."""
    store = registry.vector_store()
    entries = []
    slugs = dict(Guru.objects.values_list("pk", "slug"))
    # A record whose guru is gone belongs to a drop in progress: nothing of it is exported.
    for record in VectorCollection.objects.filter(guru_id__in=list(slugs)).order_by("guru_id"):
        member = f"vectors/{record.guru_id}.jsonl"
        count = 0
        with writer.lines(member) as out:
            if store.collection_info(record.name) is not None:
                for batch in store.scan(record.name, batch_size=SCAN_BATCH):
                    for chunk in batch:
                        out.write(dumps(chunk_row(chunk)) + "\n")
                    count += len(batch)
        entries.append({"guru": record.guru_id, "slug": slugs[record.guru_id], "collection": record.name,
                        "dimension": record.dimension, "embedder": record.embedder, "chunks": count,
                        "member": member})
    return entries


def check_targets(reader: ArchiveReader, *, replace: bool) -> None:
    """Refuse before anything is written if a collection the archive fills already holds chunks."""
    store = registry.vector_store()
    for entry in reader.manifest.get("collections", []):
        info = store.collection_info(collection_name_for(entry["slug"]))
        if info is not None and info.row_count and not replace:
            raise ArchiveError(
                f"The vector collection {info.name} already holds {info.row_count} chunks (another install on "
                "the same Milvus with the same OPENGURU_COLLECTION_PREFIX, or a previous import). Run again with "
                "--replace to drop it, or set another prefix."
            )


def import_vectors(reader: ArchiveReader, *, replace: bool) -> list[VectorResult]:
    """Create each guru's collection for this install and fill it from the archive (or queue a re-index)."""
    embedder_id = registry.embedder_id()
    results = []
    for entry in reader.manifest.get("collections", []):
        guru = Guru.objects.filter(pk=entry["guru"], slug=entry["slug"]).first()
        if guru is None:
            raise ArchiveError(
                f"Guru #{entry['guru']} ({entry['slug']}) is not in this install's database: restore the "
                "database first (pg_restore, or import_data without --vectors-only)."
            )
        with cache_lock(collection_lock_name(guru.pk), ttl=LOCK_TTL_S, wait=LOCK_WAIT_S):
            results.append(_import_guru(reader, guru, entry, embedder_id=embedder_id, replace=replace))
    return results


def _import_guru(reader: ArchiveReader, guru: Guru, entry: dict[str, Any], *, embedder_id: str,
                 replace: bool) -> VectorResult:
    name = collection_name_for(guru.slug)
    if entry["embedder"] != embedder_id or entry["dimension"] != registry.embedder().dimension:
        # source_reembed_guru drops what is there, creates the collection for this embedder, queues every source.
        source_reembed_guru(guru_id=guru.pk)
        return VectorResult(guru.slug, name, 0, "re-indexing", list(guru.sources.values_list("pk", flat=True)))
    store = registry.vector_store()
    if replace:
        store.drop_collection(name)
    guru_collection_sync(guru_id=guru.pk)
    live: Counter[tuple[int, int]] = Counter()
    batch = []
    for row in reader.rows(entry["member"]):
        chunk = row_chunk(row)
        live[(chunk.source_id, chunk.generation)] += 1
        batch.append(chunk)
        if len(batch) >= WRITE_BATCH:
            store.upsert(name, batch)
            batch = []
    store.upsert(name, batch)
    _check_count(name, written=sum(live.values()), expected=int(entry["chunks"]))
    stale = _reindex_inconsistent(guru, live)
    return VectorResult(guru.slug, name, sum(live.values()), "imported" if live else "empty", stale)


def _check_count(name: str, *, written: int, expected: int) -> None:
    info = registry.vector_store().collection_info(name)
    stored = info.row_count if info else 0
    if written != expected or stored != expected:
        raise ArchiveError(f"Collection {name}: the archive lists {expected} chunks, {written} were read and the "
                           f"store holds {stored}. Nothing is lost in the archive; run the import again.")


def _reindex_inconsistent(guru: Guru, live: Counter[tuple[int, int]]) -> list[int]:
    """Queue a re-index for each source whose live chunks in the archive do not match its row.

    Rows and vectors are read at different moments (and a pg_dump is taken apart from the vectors), so an
    index run that finished in between leaves a source pointing at a generation the archive lacks.
    """
    stale = []
    for source in DataSource.objects.filter(guru=guru, indexed_generation__isnull=False):
        if live[(source.pk, int(source.indexed_generation or 0))] != source.chunk_count:
            source_schedule_index(source=source)
            stale.append(source.pk)
    return stale
