"""Incremental Git re-sync (any host): re-index only files whose blob changed, delete removed ones."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction

from backend.adapters import registry
from backend.adapters.github.links import blob_link, repo_name
from backend.adapters.github.repo import language_for
from backend.pipeline.chunking import TextChunk, chunk_id
from backend.pipeline.ingest_types import ContentType, Document, RepoFile, RepoSnapshot
from backend.sources.models import DataSource, GithubFile
from backend.sources.progress import INCREMENTAL_GENERATION, Progress
from backend.sources.validation import token_for
from backend.sources.writer import ChunkWriter, WriteResult

logger = logging.getLogger(__name__)

# Files whose chunks are written before their old versions are deleted and their rows updated.
GROUP_CHUNKS = 64
_PROSE_EXTENSIONS = {".md": ContentType.MARKDOWN, ".mdx": ContentType.MARKDOWN, ".rst": ContentType.PROSE,
                     ".txt": ContentType.PROSE, ".adoc": ContentType.PROSE}


def _content_type(path: str) -> ContentType:
    return _PROSE_EXTENSIONS.get(PurePosixPath(path).suffix.lower(), ContentType.CODE)


def _old_ids(source_id: int, row: GithubFile) -> list[str]:
    return [chunk_id(source_id=source_id, generation=INCREMENTAL_GENERATION, doc_key=row.path,
                     version=row.blob_sha, index=i) for i in range(row.chunk_count)]


@dataclass
class _Pending:
    file: RepoFile
    chunks: int


class _Sync:
    """Writes changed files in groups: new chunks first, then old versions deleted, then rows saved."""

    def __init__(self, source: DataSource, snapshot: RepoSnapshot, writer: ChunkWriter) -> None:
        self.source, self.snapshot, self.writer = source, snapshot, writer
        self.known = {row.path: row for row in source.github_files.all()}
        self.pending: list[_Pending] = []
        writer.link_for = self._link

    def _link(self, doc: Document, chunk: TextChunk) -> str:
        return blob_link(self.snapshot, doc.key, chunk.locator.get("line_start"), chunk.locator.get("line_end"))

    def changed(self) -> list[RepoFile]:
        return [f for f in self.snapshot.files
                if (row := self.known.get(f.path)) is None or row.blob_sha != f.blob_sha or not row.in_index]

    def removed(self) -> list[GithubFile]:
        current = {f.path for f in self.snapshot.files}
        return [row for path, row in self.known.items() if path not in current]

    def add(self, file: RepoFile) -> None:
        text = registry.repo_reader().read(self.snapshot, file.path)
        doc = Document(key=file.path, text=text, title=file.path, link=blob_link(self.snapshot, file.path),
                       content_type=_content_type(file.path), language=language_for(file.path))
        self.pending.append(_Pending(file, self.writer.add(doc, version=file.blob_sha)))
        if sum(p.chunks for p in self.pending) >= GROUP_CHUNKS:
            self.commit()

    def commit(self) -> None:
        self.writer.flush()
        store, collection = self.writer.store, self.writer.collection
        stale = [cid for p in self.pending if (row := self.known.get(p.file.path)) and row.blob_sha != p.file.blob_sha
                 for cid in _old_ids(self.source.pk, row)]
        store.delete_ids(collection, stale)
        with transaction.atomic():
            for p in self.pending:
                GithubFile.objects.update_or_create(source=self.source, path=p.file.path, defaults={
                    "blob_sha": p.file.blob_sha, "size": p.file.size, "in_index": True, "chunk_count": p.chunks,
                    "link": blob_link(self.snapshot, p.file.path)})
        self.pending = []

    def remove(self, row: GithubFile) -> None:
        self.writer.store.delete_ids(self.writer.collection, _old_ids(self.source.pk, row))
        row.delete()


def github_sync(source: DataSource, writer: ChunkWriter, progress: Progress) -> WriteResult:
    """Bring the source's chunks in line with the repository's current files."""
    options = source.options or {}
    snapshot = registry.repo_reader().snapshot(
        source.url, branch=options.get("branch", ""), token=token_for(source.url, source.access_token),
        include=options.get("include", ()), exclude=options.get("exclude", ()),
        workdir=str(Path(settings.OPENGURU_REPOS_DIR) / str(source.pk)),
    )
    sync = _Sync(source, snapshot, writer)
    changed, removed = sync.changed(), sync.removed()
    if writer.budget is not None:
        # Before anything is read or embedded: a file has at least as many bytes as characters, so a plain-text
        # repository over the text bound fails here at once instead of after minutes of embedding.
        writer.budget.check_text(sum(file.size for file in changed))
    progress.set_total(len(changed) + len(removed))
    for file in changed:
        sync.add(file)
        progress.advance()
    sync.commit()
    for row in removed:
        sync.remove(row)
        progress.advance()
    logger.info("github source %s: %d changed, %d removed, %d skipped", source.pk, len(changed), len(removed),
                len(snapshot.skipped))
    total = sum(GithubFile.objects.filter(source=source).values_list("chunk_count", flat=True))
    title = repo_name(source.url)
    note = f"{len(snapshot.skipped)} file(s) skipped (size, type or filters)." if snapshot.skipped else ""
    return WriteResult(chunks=total, title=title, note=note)
